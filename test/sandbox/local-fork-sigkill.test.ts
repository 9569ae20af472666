/**
 * Nothing of a snapshot is left after its process is SIGKILLed, once the next one has started
 * (docs/sandboxes.md#snapshots-and-forks): a child process creates a local sandbox, snapshots it
 * and forks it, and is killed with SIGKILL with the fork still open; no process of it survives
 * holding the overlay mounts, and the next provider's start removes its folder (forks included).
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapMissing, localProviders, makeTestRepo, tempDir } from './local-helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Processes (other than this one) whose command line or mounts name `path`. */
function processesUsing(path: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const mounts = readFileSync(`/proc/${entry}/mountinfo`, 'utf8');
      if (cmdline.includes(path) || mounts.includes(path)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

describe.skipIf(bwrapMissing)('local snapshots after SIGKILL', () => {
  const parent = tempDir('wnw-fork-kill-');
  const repo = tempDir('wnw-fork-kill-repo-');
  makeTestRepo(repo.dir);
  // The sandbox user must pass through the folder its root folder is made in.
  chmodSync(parent.dir, 0o711);
  const { make, closeAll } = localProviders();
  let child: ReturnType<typeof spawn> | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await closeAll();
    parent.remove();
    repo.remove();
  });

  it('leaves no process or mount of a killed provider, and the next start removes its folder', { timeout: 180_000 }, async () => {
    const script = join(parent.dir, 'hold-a-fork.mts');
    writeFileSync(
      script,
      `import { createLocalProvider } from ${JSON.stringify(join(root, 'src/sandbox/providers/local/provider.ts'))};
const provider = createLocalProvider({ rootDir: ${JSON.stringify(parent.dir)}, logger: { info() {}, warn() {}, error() {}, debug() {} } });
const sandbox = await provider.create({ repo: { path: ${JSON.stringify(repo.dir)} } });
await sandbox.exec('echo x > x.txt');
const snapshot = await sandbox.snapshot();
const fork = await provider.fork(snapshot);
const read = await fork.exec('cat x.txt');
console.log(JSON.stringify({ rootDir: (await provider.describe()).rootDir, read: read.stdout }));
setInterval(() => {}, 1000);
`,
    );
    // Node itself with tsx's loader, not the tsx CLI: the CLI is a wrapper, and SIGKILL must reach the provider's process.
    const loader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
    child = spawn(process.execPath, ['--import', loader, script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child!.stdout! }).once('line', resolve);
      child!.once('exit', (code) => reject(new Error(`the child exited ${code} before forking`)));
    });
    const { rootDir, read } = JSON.parse(line) as { rootDir: string; read: string };
    expect(read).toBe('x\n');
    expect(readdirSync(join(rootDir, 'forks'))).toHaveLength(1);
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // The sandbox's processes and mount holders die with it (die-with-parent, pdeathsig).
    const deadline = Date.now() + 10_000;
    while (processesUsing(rootDir).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesUsing(rootDir)).toEqual([]);
    expect(existsSync(rootDir)).toBe(true);

    const next = make({ rootDir: parent.dir });
    await next.describe();
    expect(existsSync(rootDir)).toBe(false);
  });
});
