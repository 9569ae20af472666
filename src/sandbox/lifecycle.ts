/**
 * Process-wide registry of open sandboxes: whatever is still open at shutdown, SIGINT or SIGTERM
 * is closed before the process exits. Closing twice is harmless. Also the process's synchronous
 * exit cleanups (onProcessExit).
 */
export interface Closable {
  readonly id: string;
  close(): Promise<void>;
}

const open = new Set<Closable>();
let handlersInstalled = false;
let shuttingDown: Promise<void> | undefined;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      // Another handler (the server's graceful shutdown) decides when to exit; alone, exit as a signal would.
      const othersHandle = process.listenerCount(signal) > 0;
      void closeAllSandboxes().finally(() => {
        if (!othersHandle) process.exit(signal === 'SIGINT' ? 130 : 143);
      });
    });
  }
}

/** Tracks a sandbox until it is closed. */
export function trackSandbox(sandbox: Closable): void {
  installHandlers();
  open.add(sandbox);
}

export function untrackSandbox(sandbox: Closable): void {
  open.delete(sandbox);
}

/** How many sandboxes are open in this process (for health checks and tests). */
export function openSandboxCount(): number {
  return open.size;
}

/** Closes each sandbox, all of them even when some fail; the first failure, if any, comes back. */
export async function closeEach(sandboxes: Iterable<Closable>): Promise<PromiseRejectedResult | undefined> {
  const results = await Promise.allSettled([...sandboxes].map((sandbox) => sandbox.close()));
  return results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
}

/** Closes every tracked sandbox; concurrent callers share one pass. */
export function closeAllSandboxes(): Promise<void> {
  shuttingDown ??= Promise.allSettled([...open].map((sandbox) => sandbox.close())).then(() => {
    shuttingDown = undefined;
  });
  return shuttingDown;
}

const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Runs `cleanup` if the process exits (a crash, process.exit) before the returned function is
 * called to unregister it. Only synchronous work is possible at exit.
 */
export function onProcessExit(cleanup: () => void): () => void {
  if (!exitHookInstalled) process.once('exit', () => exitCleanups.forEach((each) => each()));
  exitHookInstalled = true;
  exitCleanups.add(cleanup);
  return () => exitCleanups.delete(cleanup);
}
