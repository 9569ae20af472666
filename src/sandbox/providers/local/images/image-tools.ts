/**
 * The two programs images go through: skopeo (fetch from a registry, OCI layout or archive into an
 * OCI layout) and umoci (unpack a layout's layers into a root filesystem, whiteouts honoured).
 * Both from Debian (`apt-get install -y skopeo umoci`). Every run has a deadline and an abort
 * signal; either kills the program's whole process group (local-host-command.ts).
 */
import { wnwError, type WinnowerError } from '../../../../errors.js';
import { HOST_PATH, runHostCommand, tail, type HostCommandResult } from '../../../host-command.js';
import { which } from '../host.js';
import type { Owner } from '../overlay.js';
import { isLoopbackRegistry, type ImageReference } from '../../../image-reference.js';

export const IMAGE_TOOLS_HINT = 'apt-get install -y skopeo umoci';

export interface ImageTools {
  skopeo: string;
  umoci: string;
}

export interface ImageToolSettings {
  skopeoPath?: string;
  umociPath?: string;
}

/** Finds skopeo and umoci, or WNW_ERR_SBX_UNAVAILABLE with the install command. */
export async function findImageTools(settings: ImageToolSettings = {}): Promise<ImageTools> {
  const [skopeo, umoci] = await Promise.all([settings.skopeoPath ?? which('skopeo'), settings.umociPath ?? which('umoci')]);
  if (!skopeo || !umoci) {
    const missing = [!skopeo ? 'skopeo' : '', !umoci ? 'umoci' : ''].filter(Boolean).join(' and ');
    throw wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      `container images on the local provider need ${missing}; install them with: ${IMAGE_TOOLS_HINT}`,
      {
        details: { install: IMAGE_TOOLS_HINT, missing },
      },
    );
  }
  return { skopeo, umoci };
}

/** What reaches skopeo from our environment: where credentials, registry config and proxies are. */
const SKOPEO_ENV = [
  'HOME',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'REGISTRY_AUTH_FILE',
  'DOCKER_CONFIG',
  'CONTAINERS_REGISTRIES_CONF',
  'CONTAINERS_POLICY_JSON',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'TMPDIR',
];

export interface RegistrySettings {
  /** containers auth.json (or a Docker config.json); default: REGISTRY_AUTH_FILE, then skopeo's own search. */
  authFile?: string;
  /** Registries spoken to over plain HTTP / unverified TLS (loopback ones always are). */
  insecureRegistries?: string[];
}

/** skopeo's flags for reading `ref` (credentials, TLS): `inspect`'s, or `copy`'s for its source. */
export function sourceFlags(ref: ImageReference, settings: RegistrySettings, command: 'inspect' | 'copy'): string[] {
  if (ref.transport !== 'docker') return [];
  const prefix = command === 'copy' ? '--src-' : '--';
  const flags: string[] = [];
  const authFile = settings.authFile ?? process.env.REGISTRY_AUTH_FILE;
  if (authFile) flags.push(`${prefix}authfile`, authFile);
  if (isLoopbackRegistry(ref.registry) || (ref.registry !== undefined && (settings.insecureRegistries ?? []).includes(ref.registry)))
    flags.push(`${prefix}tls-verify=false`);
  return flags;
}

export interface ToolRun {
  /** Kills the program when it fires. */
  signal: AbortSignal;
  /** Deadline of this run. */
  timeoutMs: number;
  /** Run as this user (umoci unpacks as the sandbox user). */
  as?: Owner;
}

/** Runs one of the tools; resolves with its result whatever the exit code. */
export function runTool(file: string, args: string[], run: ToolRun): Promise<HostCommandResult> {
  const env: NodeJS.ProcessEnv = { PATH: HOST_PATH, LANG: 'C.UTF-8' };
  for (const name of SKOPEO_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  return runHostCommand(file, args, { env, timeoutMs: run.timeoutMs, signal: run.signal, uid: run.as?.uid, gid: run.as?.gid });
}

/**
 * The error for a failed skopeo run on `ref`: an unreachable or failing registry is
 * WNW_ERR_SBX_REGISTRY (502), a missing image, tag, layout, archive or refused credentials
 * WNW_ERR_SBX_IMAGE (400).
 */
export function skopeoError(ref: ImageReference, what: string, result: HostCommandResult): WinnowerError {
  const stderr = tail(result.stderr, 1500);
  const details = { image: ref.display, exitCode: result.code, stderr };
  if (
    /unauthorized|authentication required|access to the resource is denied|denied:|invalid username\/password|401 Unauthorized/i.test(
      stderr,
    )
  ) {
    return wnwError(
      'WNW_ERR_SBX_IMAGE',
      `${what} ${ref.display}: the registry refused access (no such repository, or credentials missing or wrong: set REGISTRY_AUTH_FILE or sandbox.settings.registryAuthFile to a containers auth.json): ${stderr}`,
      {
        details: { ...details, reason: 'access denied' },
      },
    );
  }
  // `\b404\b`, not `404`: skopeo's message names the registry's host:port, and a port such as
  // 34041 made a refused connection read as a missing image.
  if (/manifest unknown|name unknown|not found|no descriptor found|no such file or directory|does not exist|\b404\b/i.test(stderr)) {
    return wnwError('WNW_ERR_SBX_IMAGE', `${what} ${ref.display}: no such image: ${stderr}`, {
      details: { ...details, reason: 'not found' },
    });
  }
  if (
    ref.transport === 'docker' &&
    /dial tcp|connection refused|no such host|name resolution|i\/o timeout|TLS|x509|HTTP response to HTTPS client|EOF|timeout|5\d\d /i.test(
      stderr,
    )
  ) {
    return wnwError(
      'WNW_ERR_SBX_REGISTRY',
      `${what} ${ref.display}: the registry ${ref.registry ?? 'docker.io'} is unreachable or failing: ${stderr}`,
      {
        details: { ...details, registry: ref.registry ?? 'docker.io', reason: 'unreachable' },
        retryable: true,
      },
    );
  }
  const code = ref.transport === 'docker' ? 'WNW_ERR_SBX_REGISTRY' : 'WNW_ERR_SBX_IMAGE';
  return wnwError(code, `${what} ${ref.display} failed: ${stderr || `skopeo exit ${result.code ?? result.signal}`}`, { details });
}
