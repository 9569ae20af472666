/**
 * The sandbox seam. Every rollout and every verification runs in its own Sandbox; providers
 * (local bubblewrap, Orchard Env, Docker) implement this contract and nothing else is visible
 * to the rest of winnower.
 */
import type { RepoSource } from '../types/task.js';

export interface SandboxSpec {
  /** Repository to check out (local path or git URL, at `base_commit`). */
  repo?: RepoSource;
  /** Container image (orchard, docker); the repository then lives inside the image. */
  image?: string;
  /** Working directory inside the sandbox where the repository is (default per provider). */
  workdir?: string;
  /** CPU cores (fractions allowed). */
  cpu?: number;
  /** Memory limit in MiB. */
  memoryMb?: number;
  /** Max processes inside the sandbox. */
  maxProcesses?: number;
  /** Network access; off unless asked. */
  network?: boolean;
  /**
   * Commands run as uid 0 inside the sandbox's user namespace (still without any capability, and as
   * an unprivileged user on the host), for images that expect root (`apt-get`). Local provider only.
   */
  asRoot?: boolean;
  /** Lifetime in seconds after which the provider may reap the sandbox. */
  lifetimeS?: number;
  /** Extra environment for every exec. */
  env?: Record<string, string>;
  /** A label for logs (job id, rollout index). */
  label?: string;
  /**
   * Host paths bound into the sandbox (a harness CLI installed on the host, the recording proxy's
   * socket folder). Read-only unless `readOnly` is false.
   */
  mounts?: SandboxMount[];
}

export interface SandboxMount {
  /** Absolute host path; must exist when the sandbox is created. */
  source: string;
  /** Absolute path inside the sandbox, outside the system folders and the workspace. */
  target: string;
  readOnly?: boolean;
}

export interface ExecOptions {
  /** Relative to the workspace, or absolute inside the sandbox. */
  cwd?: string;
  env?: Record<string, string>;
  /** Kill the whole process tree after this long (default 120 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Cap per stream in bytes (default 1 MiB); more sets `truncated`. */
  maxOutputBytes?: number;
  /** Data written to the command's stdin. */
  stdin?: string;
  /**
   * Stdin fed as it arrives, for an interactive session (`sandbox serve`'s PTY); ends the command's
   * stdin when it ends. Providers that cannot stream stdin refuse it (WNW_ERR_SBX_UNSUPPORTED).
   */
  input?: NodeJS.ReadableStream;
  /**
   * Called with output as it arrives, within the cap (for a CLI that shows a command's progress).
   * Providers that cannot stream call it once per stream when the command ends.
   */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Uint8Array) => void;
}

export interface ExecResult {
  /** null when the command was killed (timeout, abort) and no exit code exists. */
  exitCode: number | null;
  /**
   * The signal that ended the command's own process (the shell given the command), when a signal
   * did; `exitCode` is then 128 + it, as a shell reports. Absent when it exited, and where the
   * provider cannot tell the two apart (a child killed under the shell is an exit of 128 + N).
   */
  signal?: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  /**
   * One line on how the command ended that its output does not say, for the agent to read (local
   * provider: killed for lack of memory, a SIGKILL, a disk cap reached); absent when there is none.
   */
  note?: string;
}

/** A command on a pseudo-terminal of the sandbox's own (`sandbox serve`'s PTY sessions). */
export interface TerminalOptions {
  /** Run as given (no shell added). */
  argv: string[];
  env?: Record<string, string>;
  /** Relative to the workspace, or absolute; one that is not a directory means `/`, as on Orchard's agent. */
  cwd?: string;
  rows: number;
  cols: number;
  /** Typed bytes, as they arrive. */
  input: NodeJS.ReadableStream;
  timeoutMs: number;
  /** Output past this is dropped and sets `truncated`. */
  maxOutputBytes: number;
  /** Aborting kills the command's whole tree. */
  signal?: AbortSignal;
  /** The command's pid, once, before any output. */
  onStart(pid: number): void;
  /** What the terminal shows: stdout and stderr merged, as they arrive. */
  onOutput(chunk: Uint8Array): void;
}

export interface Terminal {
  /** Settles when the command has ended; rejects when it could not run (or was aborted: WNW_ERR_OP_ABORTED). */
  readonly result: Promise<TerminalResult>;
  /** Sends a signal (its number) to the command's process group, without starting a process. */
  signal(signal: number): void;
  /** Sets the window size (the command's foreground process group gets SIGWINCH), without starting a process. */
  resize(rows: number, cols: number): void;
}

export interface TerminalResult {
  /** As ExecResult's: 128 + N for a death by signal N, null when the timeout killed it. */
  exitCode: number | null;
  /** The signal that killed the command's own process, when one did. */
  signal?: number;
  timedOut: boolean;
  truncated: boolean;
}

export interface FileEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * A submodule section left out of an applied patch: `dirty` only adds git's `-dirty` suffix (the
 * submodule's own files changed, which a patch of the superproject does not carry), `moved` points
 * the submodule at another commit, `added` and `removed` make or delete one.
 */
export interface GitlinkChange {
  path: string;
  kind: 'dirty' | 'moved' | 'added' | 'removed';
}

/** What `applyPatch` did beyond applying: the submodule sections it left out. */
export interface PatchApplied {
  dropped: GitlinkChange[];
}

export interface Sandbox {
  readonly id: string;
  readonly provider: string;
  /** Absolute path of the repository inside the sandbox. */
  readonly workdir: string;
  /** Runs `command` with `bash -c` (sh when bash is missing). */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  writeFile(path: string, content: string | Uint8Array, options?: CallOptions): Promise<void>;
  /** Throws WNW_ERR_SBX_FILE when missing. */
  readFile(path: string, options?: CallOptions): Promise<Uint8Array>;
  listFiles(path: string, options?: CallOptions): Promise<FileEntry[]>;
  /**
   * The workspace's changes against the base commit, as a binary-safe unified diff: bytes that are
   * not valid UTF-8 come as lone surrogates (src/sandbox/patch-bytes.ts), so `encodePatch` gives the
   * exact bytes back and `applyPatch` applies them.
   */
  diff(options?: CallOptions): Promise<string>;
  /**
   * Applies a unified diff (its bytes: `encodePatch`) in the workdir; WNW_ERR_SBX_PATCH naming the
   * rejected hunk on failure. Submodule (gitlink) sections are left out first, as `git apply` leaves
   * them out of the working tree (src/sandbox/patch-gitlinks.ts); the answer names them.
   */
  applyPatch(patch: string, options?: CallOptions): Promise<PatchApplied>;
  /**
   * Settles once the sandbox is warm: its first exec costs what the next one does (the local
   * provider starts its resident exec agent after create returns). Never rejects; absent where
   * create's answer is already that.
   */
  ready?(): Promise<void>;
  /**
   * Optional: starts `argv` on a pseudo-terminal the provider makes inside the sandbox, with signals
   * and window sizes delivered without a process each. Undefined where this sandbox cannot (the
   * caller then makes a terminal itself, with a command of its own).
   */
  openTerminal?(options: TerminalOptions): Promise<Terminal | undefined>;
  /**
   * Optional: a frozen copy of this sandbox's files (docs/sandboxes.md#snapshots-and-forks), which
   * the provider's `fork` starts new sandboxes from. Processes are not carried over. Undefined where
   * the provider cannot.
   */
  snapshot?(options?: CallOptions): Promise<SandboxSnapshot>;
  /**
   * Optional: takes the workspace as it stands (a shared setup's outputs) as the base later diffs
   * are against, so a patch holds only what was done after it; a snapshot taken after it gives its
   * forks the same base (docs/sandboxes.md#snapshots-and-forks). Returns the git tree it recorded,
   * written under the patch rules (build outputs left out as a diff leaves them out).
   */
  markBase?(options?: CallOptions): Promise<string>;
  /** Releases everything; idempotent. */
  close(): Promise<void>;
}

/** A sandbox's files frozen at one moment; held until released (forks made from it keep what they need). */
export interface SandboxSnapshot {
  readonly id: string;
  /** The sandbox it was taken from. */
  readonly sandboxId: string;
  /** What the copy holds on the host, in bytes. */
  readonly bytes: number;
  /** Frees the snapshot once no fork uses it any more; idempotent. Forks already made are unaffected. */
  release(): Promise<void>;
}

/** A fork's own host binds (a harness CLI, a proxy socket), in place of its parent's; otherwise the parent's spec holds. */
export interface ForkOptions extends CallOptions {
  mounts?: SandboxMount[];
}

export interface SandboxProvider {
  readonly name: string;
  /** What isolation and limits are in force, for the start-up log. */
  describe(): Promise<Record<string, unknown>>;
  create(spec: SandboxSpec, options?: CallOptions): Promise<Sandbox>;
  /**
   * Optional: a new, independent sandbox starting from `snapshot` (one of this provider's), with the
   * spec of the sandbox it was taken from. Undefined where the provider cannot fork.
   */
  fork?(snapshot: SandboxSnapshot, options?: ForkOptions): Promise<Sandbox>;
  /**
   * True where `fork` replays what the parent received instead of copying its files (orchard): a
   * fork then costs what preparing the parent cost, so a shared setup saves nothing by it.
   */
  readonly forkReplays?: boolean;
  /** Closes every sandbox this provider still has open, and shared state (base snapshots). */
  close(): Promise<void>;
}
