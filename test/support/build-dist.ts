/**
 * vitest global setup of the isolated lane: builds dist/ (`npm run build`) when a source file is
 * newer than the last build, so that CLI tests run the compiled program (test/support/built-cli.ts).
 * A fresh `npm ci` has just built it, so CI pays nothing here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const STAMP = join(ROOT, 'dist', '.built-at');
const INPUTS = ['src', 'scripts', 'tsconfig.build.json', 'tsconfig.ui.json', 'package.json'];

function newest(path: string): number {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), info.mtimeMs);
}

function builtAt(): number {
  for (const marker of [STAMP, join(ROOT, 'dist/cli/main.js')]) if (existsSync(marker)) return statSync(marker).mtimeMs;
  return 0;
}

export default function setup(): void {
  if (process.env.WINNOWER_TEST_CLI === 'tsx') return;
  const sources = Math.max(
    ...INPUTS.map((input) => join(ROOT, input))
      .filter(existsSync)
      .map(newest),
  );
  if (sources <= builtAt()) return;
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
    writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().slice(-2000) ?? String(error);
    process.stderr.write(`build-dist: npm run build failed, so the CLI tests run through tsx this time:\n${stderr}\n`);
    process.env.WINNOWER_TEST_CLI = 'tsx';
  }
}
