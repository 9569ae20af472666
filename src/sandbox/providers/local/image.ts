/**
 * Images on the local provider: what a sandbox over an image needs besides its overlay — the
 * shared rootfs (src/sandbox/providers/local/images), the repository directory and its base commit, the
 * environment (the image's Env, then a conda environment's activation, e.g. SWE-bench's
 * `testbed`) and the shell. Looked up once per image and directory and shared by its sandboxes.
 */
import { homedir } from 'node:os';
import { join, posix } from 'node:path';
import { z } from 'zod';
import { abortedError, wnwError } from '../../../errors.js';
import { SharedTaskMap } from '../../../util/shared-task.js';
import { shellQuote } from '../../base-sandbox.js';
import { DEFAULT_PULL_TIMEOUT_MS, ImageCache, type CachedImage } from './images/image-cache.js';
import type { ImageConfig } from './images/image-config.js';
import { parseImageReference } from '../../image-reference.js';
import { findImageTools, type ImageToolSettings } from './images/image-tools.js';
import { describeBlocker, findBlocker, type PathUser } from '../../reachable.js';
import { baseSandboxEnv } from './bwrap-args.js';
import { runHostCommand, tail } from '../../host-command.js';
import { runOneOff, type LocalHost, type OneOffOptions } from './host.js';

export interface LocalImageSettings extends ImageToolSettings {
  /** Where unpacked images are kept (default /var/cache/winnower/images as root, else ~/.cache/winnower/images). */
  imageCacheDir?: string;
  /** The repository directory inside images (default /testbed, as in SWE-bench images). */
  imageWorkdir?: string;
  /** Conda environment activated for every command when the image has it (default testbed; false: none). */
  condaEnv?: string | false;
  /** Deadline of a first pull and unpack, in ms (default 30 min). */
  pullTimeoutMs?: number;
  /** How long a registry may take to answer for an image's manifest, in ms (default 2 min). */
  registryTimeoutMs?: number;
  /** containers auth.json with registry credentials (default REGISTRY_AUTH_FILE, then skopeo's search). */
  registryAuthFile?: string;
  /** Registries reached over plain HTTP or unverified TLS, as host:port (loopback ones always are). */
  insecureRegistries?: string[];
}

/** What a sandbox over an image starts from. */
export interface ImageBase {
  image: CachedImage;
  /** The repository directory (the sandbox's workdir). */
  workdir: string;
  /** HEAD of the workdir's repository; undefined when it is not one. */
  baseCommit: string | undefined;
  /** Environment of every exec before the spec's and the call's. */
  env: Record<string, string>;
  /** bash when the image has it, else sh. */
  shell: string;
  /** HOME as the image's Env (or its conda activation) sets it; undefined when neither does. */
  envHome: string | undefined;
  /** The homes its /etc/passwd gives root and the sandbox user, by uid (home.ts picks one). */
  passwdHomes: Record<number, string>;
}

export const DEFAULT_IMAGE_WORKDIR = '/testbed';
// Mounted over by every exec: a repository cannot live there.
const MOUNTED_OVER = ['/proc', '/dev', '/tmp', '/var/tmp', '/run'];
const CONDA_MARK = '\n--winnower-conda--\n';
// Conda bookkeeping that activation sets and a plain environment has no use for.
const SHELL_STATE = new Set(['PWD', 'OLDPWD', 'SHLVL', '_', 'PS1']);

/** The default cache folder; as root, one the sandbox user can reach (not under /root). */
export function defaultImageCacheDir(): string {
  if (process.getuid?.() === 0) return '/var/cache/winnower/images';
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'winnower', 'images');
}

export const ImageSettingsSchema = z.object({
  imageCacheDir: z
    .string()
    .min(1)
    .refine((dir) => !/[,:\\]/.test(dir), "overlay paths cannot contain ',', ':' or '\\'")
    .optional(),
  imageWorkdir: z.string().startsWith('/').optional(),
  condaEnv: z.union([z.literal(false), z.string().regex(/^[A-Za-z0-9_.-]+$/, 'an environment name')]).optional(),
  pullTimeoutMs: z.number().int().positive().optional(),
  registryTimeoutMs: z.number().int().positive().optional(),
  registryAuthFile: z.string().min(1).optional(),
  insecureRegistries: z.array(z.string().min(1)).optional(),
  skopeoPath: z.string().startsWith('/').optional(),
  umociPath: z.string().startsWith('/').optional(),
});

/** Checks the image settings when the provider is made: WNW_ERR_CFG_INVALID naming a bad one. */
export function checkImageSettings(settings: LocalImageSettings): void {
  const parsed = ImageSettingsSchema.safeParse(settings);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const field = `sandbox.settings.${issue.path.join('.')}`;
  throw wnwError('WNW_ERR_CFG_INVALID', `${field}: ${issue.message}`, { details: { field } });
}

/** The image settings in force and whether skopeo and umoci are here, for describe(). */
export async function describeImages(settings: LocalImageSettings): Promise<Record<string, unknown>> {
  return {
    tools: await findImageTools(settings).then(
      (tools) => `${tools.skopeo}, ${tools.umoci}`,
      (error: unknown) => `unavailable: ${(error as Error).message}`,
    ),
    transports:
      'registry name:tag | name@digest | docker://…, oci:<dir>:<tag>, oci-archive:<file>, docker-archive:<file> (pulled with skopeo, unpacked with umoci)',
    cacheDir: settings.imageCacheDir ?? defaultImageCacheDir(),
    workdir: settings.imageWorkdir ?? DEFAULT_IMAGE_WORKDIR,
    condaEnv: settings.condaEnv ?? 'testbed',
    pullTimeoutMs: settings.pullTimeoutMs ?? DEFAULT_PULL_TIMEOUT_MS,
  };
}

interface Facts {
  dirs: Record<string, { exists: boolean; commit: string | undefined }>;
  bash: boolean;
  passwdHomes: Record<number, string>;
  condaEnv: Record<string, string> | undefined;
}

export class LocalImages {
  #cache: Promise<ImageCache> | undefined;
  readonly #facts = new SharedTaskMap<Facts>();

  constructor(
    readonly host: LocalHost,
    readonly settings: LocalImageSettings,
  ) {}

  /** Pulls (or finds) the image of `spec.image` and works out how its sandboxes start. */
  async base(imageText: string, workdirWanted: string | undefined, signal: AbortSignal | undefined): Promise<ImageBase> {
    const ref = parseImageReference(imageText, 'image');
    if (this.host.workspaceMode !== 'overlay') {
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        `images on the local provider need overlay workspaces, which this host lacks (${this.host.overlayProblem ?? 'copy mode configured'})`,
        { details: { field: 'image' } },
      );
    }
    const explicit = workdirWanted ?? this.settings.imageWorkdir;
    const field = workdirWanted !== undefined ? 'spec.workdir' : 'sandbox.settings.imageWorkdir';
    if (explicit !== undefined) checkImageWorkdir(explicit, field);
    const cache = await this.#openCache();
    const image = await cache.get(ref, signal);
    // Looked at inside the image, never through host paths (a symlink in it would lead out).
    const candidates =
      explicit !== undefined
        ? [posix.normalize(explicit)]
        : [DEFAULT_IMAGE_WORKDIR, ...(image.config.workingDir ? [posix.normalize(image.config.workingDir)] : [])];
    const facts = await this.#factsOf(image, candidates, signal);
    const workdir =
      explicit !== undefined ? candidates[0]! : (candidates.find((dir) => facts.dirs[dir]?.exists && !isMountedOver(dir)) ?? '/');
    if (!(facts.dirs[workdir]?.exists ?? workdir === '/')) {
      throw wnwError(
        'WNW_ERR_SBX_IMAGE',
        `the image ${image.source} has no directory ${workdir} (set ${field} to where its repository is)`,
        { details: { field, image: image.source, workdir } },
      );
    }
    const imageEnv = { ...image.config.env, ...facts.condaEnv };
    return {
      image,
      workdir,
      baseCommit: facts.dirs[workdir]?.commit,
      env: withImageEnv(imageEnv),
      shell: facts.bash ? 'bash' : 'sh',
      envHome: imageEnv.HOME,
      passwdHomes: facts.passwdHomes,
    };
  }

  async close(): Promise<void> {
    await this.#facts.abortAll(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
    const cache = await this.#cache?.catch(() => undefined);
    await cache?.close();
  }

  #openCache(): Promise<ImageCache> {
    this.#cache ??= (async () => {
      const tools = await findImageTools(this.settings);
      const cacheDir = this.settings.imageCacheDir ?? defaultImageCacheDir();
      if (this.host.owner) checkReachable(cacheDir, this.host.owner);
      return ImageCache.open({
        cacheDir,
        tools,
        owner: this.host.owner,
        pullTimeoutMs: this.settings.pullTimeoutMs,
        registryTimeoutMs: this.settings.registryTimeoutMs,
        ...(this.settings.registryAuthFile ? { authFile: this.settings.registryAuthFile } : {}),
        insecureRegistries: this.settings.insecureRegistries,
        finalize: (rootfs, config, signal) => this.#finalize(rootfs, config, signal),
      });
    })();
    this.#cache.catch(() => {
      this.#cache = undefined;
    });
    return this.#cache;
  }

  /**
   * Before a fresh rootfs is shared, one writable one-off in it: bwrap makes the folders every exec
   * mounts over (it cannot in a read-only root; done by bwrap as the sandbox user, not by us as
   * root, since a symlink in the image could lead them out), and the git index of the default
   * repository directories is refreshed as the sandbox user sees the files (docs/design/04-local-sandbox.md#3).
   */
  async #finalize(rootfs: string, config: ImageConfig, signal: AbortSignal): Promise<void> {
    // Files of the cache belong to the sandbox user on the host: a setuid one would let any host
    // user run as it (and change every image). Run as that user; find does not follow symlinks.
    // A folder the image made unreadable (mode 000) makes find exit 1: nobody else can reach it either.
    const owner = this.host.owner;
    const strip = await runHostCommand(
      'find',
      [rootfs, '-xdev', '-type', 'f', '-perm', '/6000', '-exec', 'chmod', 'ug-s', '--', '{}', '+'],
      { signal, timeoutMs: 600_000, uid: owner?.uid, gid: owner?.gid },
    );
    if (strip.timedOut || strip.code === null)
      throw wnwError('WNW_ERR_SBX_IMAGE', `clearing the setuid bits of the image's files did not finish: ${tail(strip.stderr)}`);
    const dirs = [...new Set([this.settings.imageWorkdir ?? DEFAULT_IMAGE_WORKDIR, ...(config.workingDir ? [config.workingDir] : [])])];
    const script = `for d in ${dirs.map(shellQuote).join(' ')}; do [ -e "$d/.git" ] && git -C "$d" update-index -q --refresh >/dev/null 2>&1; done; exit 0`;
    const result = await runInImage(this.host, rootfs, script, {
      signal,
      timeoutMs: 600_000,
      image: { readOnly: false, env: withImageEnv(config.env) },
    });
    if (result.exitCode !== 0)
      throw wnwError(
        'WNW_ERR_SBX_IMAGE',
        `the image's root filesystem cannot host a sandbox: ${tail(result.stderrText) || `exit ${result.exitCode}`}`,
        { details: { stderr: tail(result.stderrText) } },
      );
  }

  /** Which of `dirs` exist and their HEADs, bash, the conda activation: found once per (image, dirs) in a read-only one-off. */
  #factsOf(image: CachedImage, dirs: string[], signal: AbortSignal | undefined): Promise<Facts> {
    // Shared by concurrent creates; stopped only when all of them have given up (then tried anew).
    return this.#facts.join([image.digest, ...dirs].join('\0'), (abort) => this.#inspect(image, dirs, abort), signal);
  }

  async #inspect(image: CachedImage, dirs: string[], signal: AbortSignal | undefined): Promise<Facts> {
    const conda = this.settings.condaEnv === false ? '' : (this.settings.condaEnv ?? 'testbed');
    const mark = CONDA_MARK.replace(/\n/g, '\\n');
    const script = [
      'if command -v bash >/dev/null 2>&1; then echo bash; else echo sh; fi',
      // One line per directory: whether it exists, and its HEAD when it is a repository.
      `for d in ${dirs.map(shellQuote).join(' ')}; do`,
      '  if [ -d "$d" ]; then printf "1 %s\\n" "$(git -C "$d" rev-parse -q --verify HEAD 2>/dev/null)"; else echo 0; fi',
      'done',
      // The homes of root and the sandbox user (HOME: home.ts), read in the image like everything here.
      `[ -r /etc/passwd ] && while IFS=: read -r _n _p u _g _c h _s || [ -n "$_n" ]; do case "$u" in 0|${this.host.innerUid}) printf 'passwd %s %s\\n' "$u" "$h";; esac; done < /etc/passwd`,
      `name=${shellQuote(conda)}`,
      '[ -n "$name" ] || exit 0',
      // Where SWE-bench and the usual images install conda; the image's PATH first.
      'for c in "$(command -v conda 2>/dev/null)" /opt/miniconda3/bin/conda /opt/conda/bin/conda /root/miniconda3/bin/conda /usr/local/bin/conda; do [ -n "$c" ] && [ -x "$c" ] && break; c=; done',
      '[ -n "$c" ] || exit 0',
      'base=$(dirname "$(dirname "$c")")',
      '[ -d "$base/envs/$name" ] && [ -f "$base/etc/profile.d/conda.sh" ] || exit 0',
      `printf '${mark}'; env -0; printf '${mark}'`,
      '. "$base/etc/profile.d/conda.sh" && conda activate "$name" >/dev/null 2>&1 && env -0',
    ].join('\n');
    const result = await runInImage(this.host, image.rootfs, script, {
      signal,
      timeoutMs: 120_000,
      maxOutputBytes: 1024 * 1024,
      image: { readOnly: true, env: withImageEnv(image.config.env) },
    });
    if (result.exitCode !== 0) {
      throw wnwError(
        'WNW_ERR_SBX_IMAGE',
        `cannot run a command in the image ${image.source}: ${tail(result.stderrText) || `exit ${result.exitCode}`}`,
        { details: { image: image.source, stderr: tail(result.stderrText) } },
      );
    }
    const [head = '', before, after] = result.stdout.toString().split(CONDA_MARK);
    const [shell, ...lines] = head.split('\n');
    const found: Facts['dirs'] = {};
    dirs.forEach((dir, index) => {
      const [exists, commit] = (lines[index] ?? '0').split(' ');
      found[dir] = { exists: exists === '1', commit: commit && /^[0-9a-f]{40,64}$/.test(commit) ? commit : undefined };
    });
    const passwdHomes: Record<number, string> = {};
    for (const line of lines.slice(dirs.length)) {
      const match = /^passwd (\d+) (.+)$/.exec(line);
      if (match && !(Number(match[1]) in passwdHomes)) passwdHomes[Number(match[1])] = match[2]!;
    }
    return {
      dirs: found,
      bash: shell === 'bash',
      passwdHomes,
      condaEnv: before !== undefined && after ? activationDiff(before, after) : undefined,
    };
  }
}

/** runOneOff in an image with sh, or with bash where the image has no sh (Debian's extract variant makes no /bin/sh). */
async function runInImage(host: LocalHost, rootfs: string, script: string, options: OneOffOptions): ReturnType<typeof runOneOff> {
  let result = await runOneOff(host, rootfs, script, options);
  if (/^bwrap: execvp sh: No such file/m.test(result.stderrText))
    result = await runOneOff(host, rootfs, script, { ...options, shell: 'bash' });
  if (result.killed === 'abort') throw abortedError(options.signal!);
  if (result.killed === 'timeout')
    throw wnwError(
      'WNW_ERR_SBX_TIMEOUT',
      `a command looking into the image did not finish within ${Math.round((options.timeoutMs ?? 0) / 1000)} s`,
    );
  return result;
}

/** What `conda activate` changed: the variables it set or changed (shell state left out). */
export function activationDiff(before: string, after: string): Record<string, string> {
  const parse = (text: string): Map<string, string> =>
    new Map(
      text
        .split('\0')
        .filter((entry) => entry.includes('='))
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
  const old = parse(before);
  const changed: Record<string, string> = {};
  for (const [name, value] of parse(after)) {
    if (SHELL_STATE.has(name) || old.get(name) === value || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    changed[name] = value;
  }
  return changed;
}

/** The sandbox's own base environment with the image's on top; git keeps trusting the workspace. */
export function withImageEnv(imageEnv: Record<string, string>): Record<string, string> {
  const base = baseSandboxEnv();
  const git = Object.fromEntries(Object.entries(base).filter(([name]) => name.startsWith('GIT_CONFIG_')));
  return { ...base, ...imageEnv, ...git };
}

/**
 * As root, umoci and the overlay run as the sandbox user, which must be able to pass through every
 * folder above the cache (a mode-0700 home or temp folder would stop it with "permission denied").
 */
function checkReachable(dir: string, owner: PathUser): void {
  const blocker = findBlocker(dir, owner, 'x');
  if (!blocker) return;
  const { where, fix } = describeBlocker(blocker);
  throw wnwError(
    'WNW_ERR_CFG_INVALID',
    `sandbox.settings.imageCacheDir ${dir}: the sandbox user (uid ${owner.uid}) cannot pass through ${where}; run \`${fix}\`, or pick a cache folder under folders every user can traverse`,
    {
      details: { field: 'sandbox.settings.imageCacheDir', folder: blocker.folder },
    },
  );
}

function isMountedOver(dir: string): boolean {
  return MOUNTED_OVER.some((mounted) => dir === mounted || dir.startsWith(`${mounted}/`));
}

function checkImageWorkdir(dir: string, field: string): void {
  const normalized = posix.normalize(dir);
  if (!posix.isAbsolute(normalized) || isMountedOver(normalized)) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${dir} must be an absolute path outside ${MOUNTED_OVER.join(', ')}`, {
      details: { field },
    });
  }
}
