/**
 * `withObserver(provider, observer)`: reports how long each sandbox took to create and each exec
 * took to run, and whether they failed, to callbacks (metrics); and names the HTTP request a
 * sandbox serves in its label (what providers show in their logs and container labels). Every
 * other member of the provider and its sandboxes passes through unchanged, optional ones included.
 */
import { currentRequestId } from '../observability/request-context.js';
import type { ExecOptions, ExecResult, ForkOptions, Sandbox, SandboxProvider, SandboxSnapshot, SandboxSpec } from './types.js';

export interface SandboxObserver {
  onCreate?(event: { provider: string; durationMs: number; error?: unknown }): void;
  onExec?(event: { provider: string; durationMs: number; result?: ExecResult; error?: unknown }): void;
}

/** Members read through to the target, with methods bound to it (providers keep private state). */
function passThrough<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value = Reflect.get(object, key, object) as unknown;
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

function labelled(spec: SandboxSpec): SandboxSpec {
  const requestId = currentRequestId();
  if (requestId === undefined) return spec;
  return { ...spec, label: spec.label ? `${spec.label} request=${requestId}` : `request=${requestId}` };
}

function observeSandbox(sandbox: Sandbox, observer: SandboxObserver): Sandbox {
  if (!observer.onExec) return sandbox;
  const onExec = observer.onExec.bind(observer);
  return passThrough(sandbox, {
    async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
      const started = performance.now();
      try {
        const result = await sandbox.exec(command, options);
        onExec({ provider: sandbox.provider, durationMs: performance.now() - started, result });
        return result;
      } catch (error) {
        onExec({ provider: sandbox.provider, durationMs: performance.now() - started, error });
        throw error;
      }
    },
  });
}

export function withObserver(provider: SandboxProvider, observer: SandboxObserver): SandboxProvider {
  return passThrough(provider, {
    async create(spec, options) {
      const started = performance.now();
      try {
        const sandbox = await provider.create(labelled(spec), options);
        observer.onCreate?.({ provider: provider.name, durationMs: performance.now() - started });
        return observeSandbox(sandbox, observer);
      } catch (error) {
        observer.onCreate?.({ provider: provider.name, durationMs: performance.now() - started, error });
        throw error;
      }
    },
    // A fork's execs are observed as a created sandbox's are.
    ...(provider.fork
      ? {
          ...(provider.forkReplays ? { forkReplays: true } : {}),
          fork: async (snapshot: SandboxSnapshot, options?: ForkOptions) =>
            observeSandbox(await provider.fork!(snapshot, options), observer),
        }
      : {}),
  });
}
