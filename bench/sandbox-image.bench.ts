/**
 * Images on the local (bubblewrap) provider: the first pull and unpack of an image into an empty
 * rootfs cache, create latency from the cached rootfs (same provider, and a new provider finding
 * it on disk), and exec latency inside the image against a sandbox over a checkout of the same
 * repository (the image's /testbed, copied out), interleaved.
 *
 *   npx tsx bench/sandbox-image.bench.ts [--image REF] [--pulls 3] [--creates 20] [--execs 200]
 *
 * REF defaults to $WINNOWER_TEST_REGISTRY_IMAGE (the CI testbed image: .ci/registry.sh start + push).
 * Prints a markdown report and writes it to bench/results/sandbox-image.md.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { createLocalProvider, type LocalProviderSettings } from '../src/sandbox/providers/local/provider.js';
import type { Sandbox, SandboxProvider } from '../src/sandbox/types.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    image: { type: 'string', default: process.env.WINNOWER_TEST_REGISTRY_IMAGE ?? '' },
    pulls: { type: 'string', default: '3' },
    creates: { type: 'string', default: '20' },
    execs: { type: 'string', default: '200' },
  },
});
if (!args.image) {
  console.error('give --image REF (or set WINNOWER_TEST_REGISTRY_IMAGE; .ci/registry.sh start + push makes one)');
  process.exit(2);
}
const IMAGE = args.image;
const PULLS = Number(args.pulls);
const CREATES = Number(args.creates);
const EXECS = Number(args.execs);

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const ms = (value: number): string => `${value.toFixed(1)} ms`;
const row = (label: string, samples: number[]): string => `| ${label} | ${ms(percentile(samples, 50))} | ${ms(percentile(samples, 95))} |`;

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (line = ''): void => {
    lines.push(line);
    console.log(line);
  };
  const scratch = mkdtempSync(join(tmpdir(), 'wnw-bench-image-'));
  // As root the sandbox user unpacks into the cache: it must pass through this folder.
  chmodSync(scratch, 0o711);
  const quiet: LocalProviderSettings['logger'] = { info: () => undefined, warn: (message) => console.error(`warning: ${message}`) };
  const providers: SandboxProvider[] = [];
  const provider = (cacheDir: string): SandboxProvider => {
    const made = createLocalProvider({ logger: quiet, imageCacheDir: cacheDir });
    providers.push(made);
    return made;
  };
  try {
    say('# Images on the local provider — benchmark');
    say();
    say(
      `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Linux ${release()}, Node ${process.version}; load average at start ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}.`,
    );
    say(
      `Image: \`${IMAGE}\`. Command: \`npx tsx bench/sandbox-image.bench.ts --image ${IMAGE} --pulls ${PULLS} --creates ${CREATES} --execs ${EXECS}\`.`,
    );
    say();

    // 1. First pull and unpack, each into an empty cache (inspect, copy, umoci unpack, index refresh, image facts).
    const pulls: number[] = [];
    let rootfsMb = 0;
    for (let index = 0; index < PULLS; index += 1) {
      const cacheDir = join(scratch, `cache-${index}`);
      const [sandbox, took] = await timed(() => provider(cacheDir).create({ image: IMAGE }));
      pulls.push(took);
      await sandbox.close();
      rootfsMb = Number(execFileSync('du', ['-sm', cacheDir], { encoding: 'utf8' }).split('\t')[0]);
    }
    const cacheDir = join(scratch, 'cache-0');
    const images = providers[0]!;
    // 2. Creates from the cached rootfs: in the provider that pulled it, and a new provider finding it on disk.
    const [onDisk, firstFromDisk] = await timed(() => provider(cacheDir).create({ image: IMAGE }));
    await onDisk.close();
    const creates: number[] = [];
    const closes: number[] = [];
    for (let index = 0; index < CREATES; index += 1) {
      const [sandbox, took] = await timed(() => images.create({ image: IMAGE }));
      creates.push(took);
      await sandbox.exec('true');
      closes.push((await timed(() => sandbox.close()))[1]);
    }
    say('## Pull, unpack and create');
    say();
    say(`Unpacked rootfs: ${rootfsMb} MB on disk.`);
    say();
    say('| step | p50 | p95 |');
    say('|---|---|---|');
    say(`${row(`first create, empty cache (skopeo inspect + copy, umoci unpack, git index refresh, image facts), ${PULLS}×`, pulls)}`);
    say(`| first create in a new provider, rootfs on disk (skopeo inspect + image facts) | ${ms(firstFromDisk)} | |`);
    say(`${row(`create from the cached rootfs (overlay mount + cgroups), ${CREATES}×`, creates)}`);
    say(`${row(`close, ${CREATES}×`, closes)}`);
    say();

    // 3. Exec inside the image vs a checkout of the same repository, interleaved so both see the same load.
    const inImage = await images.create({ image: IMAGE });
    // The same repository as a checkout: the image's /testbed in the cache, cloned as any local repository.
    const entry = readdirSync(cacheDir).find((name) => !name.startsWith('.'))!;
    const checkout = join(cacheDir, entry, 'rootfs', 'testbed');
    const repoProvider = createLocalProvider({ logger: quiet });
    providers.push(repoProvider);
    const inCheckout = await repoProvider.create({ repo: { path: checkout } });
    const samples = { image: [] as number[], checkout: [] as number[], imageGit: [] as number[], checkoutGit: [] as number[] };
    const run = async (sandbox: Sandbox, command: string, into: number[]): Promise<void> => {
      const [result, took] = await timed(() => sandbox.exec(command));
      if (result.exitCode !== 0) throw new Error(`${command} failed: ${result.stderr}`);
      into.push(took);
    };
    for (let index = 0; index < EXECS; index += 1) {
      await run(inImage, 'echo hi', samples.image);
      await run(inCheckout, 'echo hi', samples.checkout);
    }
    for (let index = 0; index < 10; index += 1) {
      await run(inImage, 'git status --short', samples.imageGit);
      await run(inCheckout, 'git status --short', samples.checkoutGit);
    }
    await inImage.close();
    await inCheckout.close();
    say(`## Exec latency (\`echo hi\`, ${EXECS} sequential calls each, interleaved)`);
    say();
    say('| sandbox | p50 | p95 |');
    say('|---|---|---|');
    say(row('inside the image (overlay over the image root)', samples.image));
    say(row('over a checkout of the same repository (host /usr, /etc)', samples.checkout));
    say(row("`git status --short` in the image's /testbed, 10×", samples.imageGit));
    say(row('`git status --short` in the checkout, 10×', samples.checkoutGit));
    say();
    say(
      `Load average at the end: ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')} (2 cores shared with other work: figures are pessimistic).`,
    );
  } finally {
    for (const each of providers) await each.close().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
  writeFileSync(join(root, 'bench', 'results', 'sandbox-image.md'), `${lines.join('\n')}\n`);
}

await main();
