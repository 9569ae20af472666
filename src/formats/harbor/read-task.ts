/**
 * Reads one Harbor task folder (`task.toml`, `instruction.md`, `environment/`, `tests/test.sh`)
 * into a `HarborTask`, or throws WNW_ERR_INPUT_INVALID naming the file and key at fault. What
 * winnower refuses, and what each environment form means on each sandbox provider, is in
 * docs/harbor.md.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, constants as fs } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { wnwError } from '../../errors.js';
import { HARBOR_SCHEMA_VERSIONS, HarborTaskConfig, memoryToMb } from './task-config.js';

/** Largest task.toml, instruction.md or Dockerfile read (real ones are a few KiB). */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;

/** Harbor's verifier time limit when `[verifier] timeout_sec` is absent. */
export const DEFAULT_VERIFIER_TIMEOUT_S = 600;

export interface HarborEnvironment {
  /**
   * The image the sandboxes start from: `[environment] docker_image`, or the base of a Dockerfile
   * that only names it (`FROM <image>` and `WORKDIR` lines, as Harbor's SWE-bench adapter writes),
   * which building would not change.
   */
  image?: string;
  /** Where `image` came from. */
  imageFrom?: 'docker_image' | 'Dockerfile';
  /** `environment/Dockerfile` when there is one; winnower does not build it (docs/harbor.md#environment). */
  dockerfile?: string;
  /** `[environment] workdir`, else the Dockerfile's last WORKDIR; absent: the image's or provider's own. */
  workdir?: string;
  cpus?: number;
  memoryMb?: number;
  /** `network_mode = "public"` (or `allow_internet = true`); offline otherwise, winnower's default. */
  network: boolean;
  /** `[environment] env`, templates filled from this host's environment. */
  env: Record<string, string>;
}

export interface HarborTask {
  /** The folder, symlinks resolved. */
  dir: string;
  /** `[task] name`, else the folder's name. */
  name: string;
  schemaVersion: string;
  /** instruction.md without its leading canary lines. */
  instruction: string;
  environment: HarborEnvironment;
  /** `[agent] timeout_sec`; absent means no limit in Harbor. */
  agentTimeoutS?: number;
  verifier: { timeoutS: number; env: Record<string, string> };
  /** The folder holding test.sh, copied to /tests for the verifier. */
  testsDir: string;
  metadata: Record<string, unknown>;
}

export interface ReadHarborTaskOptions {
  /** How the caller names the folder in errors (`body.harbor_task`, `--task`). */
  field?: string;
  /** Where `${VAR}` templates are filled from (default: none, so only their defaults apply). */
  env?: NodeJS.ProcessEnv;
}

/** Keys Harbor reads that winnower cannot honour, each refused with the reason (docs/harbor.md#what-is-refused). */
const REFUSED: Array<{ key: string; when: (config: Record<string, unknown>) => boolean; why: string }> = [
  { key: 'steps', when: (c) => present(c.steps), why: 'multi-step tasks are not supported; give one task per step' },
  {
    key: 'environment.os',
    when: (c) => typeof table(c.environment).os === 'string' && String(table(c.environment).os).toLowerCase() !== 'linux',
    why: 'only linux tasks run here',
  },
  {
    key: 'verifier.environment_mode',
    when: (c) => table(c.verifier).environment_mode === 'separate',
    why: 'a separate verifier image is not supported; the tests run in a fresh sandbox of the task environment',
  },
  {
    key: 'verifier.environment',
    when: (c) => present(table(c.verifier).environment),
    why: 'a separate verifier image is not supported',
  },
  { key: 'verifier.collect', when: (c) => present(table(c.verifier).collect), why: 'collect commands are not supported' },
  { key: 'verifier.user', when: (c) => present(table(c.verifier).user), why: "the sandbox provider's user runs the tests" },
  { key: 'agent.user', when: (c) => present(table(c.agent).user), why: "the sandbox provider's user runs the agent" },
  ...(['verifier', 'agent'] as const).flatMap((phase) =>
    ['network_mode', 'allowed_hosts'].map((key) => ({
      key: `${phase}.${key}`,
      when: (c: Record<string, unknown>) => present(table(c[phase])[key]),
      why: 'per-phase networks are not supported; set [environment] network_mode',
    })),
  ),
  {
    key: 'environment.network_mode',
    when: (c) => table(c.environment).network_mode === 'allowlist',
    why: 'host allowlists are not supported: a sandbox is offline ("no-network") or online ("public")',
  },
  { key: 'environment.allowed_hosts', when: (c) => present(table(c.environment).allowed_hosts), why: 'host allowlists are not supported' },
  { key: 'environment.gpus', when: (c) => Number(table(c.environment).gpus ?? 0) > 0, why: 'sandboxes have no GPUs' },
  { key: 'environment.tpu', when: (c) => present(table(c.environment).tpu), why: 'sandboxes have no TPUs' },
  { key: 'environment.mcp_servers', when: (c) => present(table(c.environment).mcp_servers), why: 'MCP servers are not supported' },
  { key: 'environment.healthcheck', when: (c) => present(table(c.environment).healthcheck), why: 'health checks are not supported' },
];

/** Reads and checks the task folder `path`. */
export function readHarborTask(path: string, options: ReadHarborTaskOptions = {}): HarborTask {
  const field = options.field ?? 'task';
  const fail = (where: string, what: string, key?: string): never => {
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${where}${key ? ` ${key}` : ''}: ${what}`, {
      details: { field, file: where, ...(key ? { key } : {}) },
    });
  };
  let dir: string;
  try {
    dir = realpathSync(path);
  } catch {
    return fail(path, 'no such task folder');
  }
  if (!lstatSync(dir).isDirectory()) fail(path, 'not a folder');

  const tomlText = readTaskFile(dir, 'task.toml', fail);
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(tomlText) as Record<string, unknown>;
  } catch (error) {
    return fail('task.toml', `not valid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = HarborTaskConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail('task.toml', issue.message, issue.path.join('.'));
  }
  const config = parsed.data;
  const schemaVersion = config.schema_version ?? config.version ?? '1.4';
  const versionKey = config.schema_version !== undefined ? 'schema_version' : 'version';
  if (!(HARBOR_SCHEMA_VERSIONS as readonly string[]).includes(schemaVersion))
    fail('task.toml', `schema version ${JSON.stringify(schemaVersion)} is not one of ${HARBOR_SCHEMA_VERSIONS.join(', ')}`, versionKey);
  for (const rule of REFUSED) if (rule.when(raw)) fail('task.toml', rule.why, rule.key);

  const env = options.env ?? {};
  const fill = (values: Record<string, string> | undefined, key: string) =>
    fillTemplates(values ?? {}, env, (name, what) => fail('task.toml', what, `${key}.${name}`));

  const instruction = stripCanary(readTaskFile(dir, 'instruction.md', fail));
  if (instruction.trim() === '') fail('instruction.md', 'is empty');
  const environment = readEnvironment(dir, config, fail);
  if (!isRegularFile(join(dir, 'tests', 'test.sh'))) fail('tests/test.sh', 'missing (or not a regular file): the verifier runs it');

  const memoryMb = config.environment?.memory_mb ?? (config.environment?.memory ? memoryToMb(config.environment.memory) : undefined);
  const networkMode = config.environment?.network_mode;
  const allowInternet = config.environment?.allow_internet;
  return {
    dir,
    name: config.task?.name ?? basename(dir),
    schemaVersion,
    instruction,
    environment: {
      ...environment,
      ...(config.environment?.cpus !== undefined ? { cpus: config.environment.cpus } : {}),
      ...(memoryMb !== undefined ? { memoryMb } : {}),
      network: networkMode !== undefined ? networkMode === 'public' : allowInternet === true,
      env: fill(config.environment?.env, 'environment.env'),
    },
    ...(config.agent?.timeout_sec !== undefined ? { agentTimeoutS: config.agent.timeout_sec } : {}),
    verifier: { timeoutS: config.verifier?.timeout_sec ?? DEFAULT_VERIFIER_TIMEOUT_S, env: fill(config.verifier?.env, 'verifier.env') },
    testsDir: join(dir, 'tests'),
    metadata: config.metadata ?? {},
  };
}

type Fail = (where: string, what: string, key?: string) => never;

/** The image or Dockerfile, and the workdir; compose files and uploads of environment/ are refused. */
function readEnvironment(dir: string, config: HarborTaskConfig, fail: Fail): Pick<HarborEnvironment, 'image' | 'dockerfile' | 'workdir'> {
  const envDir = join(dir, 'environment');
  let entries: string[];
  try {
    if (!lstatSync(envDir).isDirectory()) throw new Error('not a folder');
    entries = readdirSync(envDir);
  } catch {
    return fail('environment/', 'missing: a task needs an environment folder');
  }
  const compose = entries.find((name) => name === 'docker-compose.yaml' || name === 'docker-compose.yml');
  if (compose) fail(`environment/${compose}`, 'compose environments are not supported; give an image ([environment] docker_image)');
  const image = config.environment?.docker_image;
  const hasDockerfile = entries.includes('Dockerfile');
  if (!image && !hasDockerfile) fail('environment/', 'needs a Dockerfile or [environment] docker_image');
  // Harbor uploads environment/ into the workdir when an image is given without a Dockerfile.
  if (image && !hasDockerfile && entries.length > 0)
    fail('environment/', 'files to upload into the workdir are not supported; put them in the image');
  const dockerfile = hasDockerfile ? join(envDir, 'Dockerfile') : undefined;
  const text = dockerfile ? readTaskFile(dir, 'environment/Dockerfile', fail) : undefined;
  const workdir = config.environment?.workdir ?? (text ? lastWorkdir(text) : undefined);
  const base = image ? undefined : text ? baseImageOnly(text) : undefined;
  return {
    ...(image ? { image, imageFrom: 'docker_image' as const } : base ? { image: base, imageFrom: 'Dockerfile' as const } : {}),
    ...(dockerfile ? { dockerfile } : {}),
    ...(workdir ? { workdir } : {}),
  };
}

/**
 * The image of a Dockerfile that only names one: a single plain `FROM <image>` (no stage name, no
 * flag, no variable) and otherwise only `WORKDIR` lines and comments. Anything else would build
 * something, which winnower does not do.
 */
export function baseImageOnly(dockerfile: string): string | undefined {
  let image: string | undefined;
  for (const raw of dockerfile.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM\s+([^\s$-][^\s$]*)$/i.exec(line);
    if (from && image === undefined) image = from[1]!;
    else if (!/^WORKDIR\s+\S+$/i.test(line)) return undefined;
  }
  return image;
}

/** The last absolute `WORKDIR` of a Dockerfile (a relative one or a variable is left to the image). */
export function lastWorkdir(dockerfile: string): string | undefined {
  let workdir: string | undefined;
  for (const line of dockerfile.split('\n')) {
    const match = /^\s*WORKDIR\s+(\S+)\s*$/i.exec(line);
    if (match && match[1]!.startsWith('/') && !match[1]!.includes('$')) workdir = match[1]!;
  }
  return workdir;
}

/** Leading canary comment lines (HTML or `#`, containing "canary") and the blank lines after them, removed. */
export function stripCanary(text: string): string {
  const lines = text.split('\n');
  let start = 0;
  while (start < lines.length && /canary/i.test(lines[start]!) && /^\s*(<!--.*-->|#.*)\s*$/.test(lines[start]!)) {
    start += 1;
    while (start < lines.length && lines[start]!.trim() === '') start += 1;
  }
  return lines.slice(start).join('\n');
}

/** `${VAR}` and `${VAR:-default}` (the whole value) filled from `env`; an unset variable without a default is an error. */
export function fillTemplates(
  values: Record<string, string>,
  env: NodeJS.ProcessEnv,
  fail: (name: string, what: string) => never,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => {
      const match = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?\}$/s.exec(value);
      if (!match) return [name, value];
      const filled = env[match[1]!] ?? match[2];
      if (filled === undefined) return fail(name, `\${${match[1]}} is not set on this host and has no default`);
      return [name, filled];
    }),
  );
}

/** A regular file of the task folder as UTF-8, never through a symlink, at most MAX_TASK_FILE_BYTES. */
function readTaskFile(dir: string, name: string, fail: Fail): string {
  let fd: number;
  try {
    fd = openSync(join(dir, name), fs.O_RDONLY | fs.O_NOFOLLOW);
  } catch {
    return fail(name, 'missing (or a symbolic link)');
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return fail(name, 'not a regular file');
    if (stat.size > MAX_TASK_FILE_BYTES) return fail(name, `larger than ${MAX_TASK_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

function table(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Set to something that asks for behaviour: not absent, not an empty list or table. */
function present(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
