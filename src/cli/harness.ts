/**
 * `winnower harness list | install <name...>`: which agent harnesses this machine can run, and
 * installing their pinned CLIs from the npm registry into the harness folder (outside the
 * repository; WINNOWER_HARNESS_DIR overrides it), where `solve --harness` and the server find them.
 */
import type { Command } from 'commander';
import { createHarnessCatalog } from '../harness/harness-catalog.js';
import { loadHarnessDefinitions } from '../harness/harness-definition.js';
import { installHarness } from '../harness/harness-install.js';
import { wnwError } from '../errors.js';

export function registerHarnessCommand(program: Command): void {
  const harness = program.command('harness').description('list agent harnesses (pi, codex, claude-code, ...) and install their CLIs');

  harness
    .command('list')
    .description('every harness definition, and whether this machine can run it')
    .action(() => {
      const catalog = createHarnessCatalog();
      console.log(`harness folder: ${catalog.installDir}`);
      for (const status of catalog.list()) {
        const what = status.package ? `${status.package}@${status.version}` : status.source;
        console.log(`${status.available ? 'ready  ' : 'missing'}  ${status.name.padEnd(12)} ${status.protocol.padEnd(19)} ${what}${status.available ? '' : `  → ${status.install_command ?? status.reason}`}`);
      }
    });

  harness
    .command('install')
    .description('install the pinned CLI of each named harness from the npm registry (kept while that version is there) into WINNOWER_HARNESS_DIR, else /var/cache/winnower/harnesses as root, else ~/.cache/winnower/harnesses')
    .argument('<names...>', 'harness names, e.g. pi claude-code')
    .action(async (names: string[]) => {
      const definitions = loadHarnessDefinitions().external;
      const dir = createHarnessCatalog().installDir;
      for (const name of names) {
        const definition = definitions.get(name);
        if (!definition) throw wnwError('WNW_ERR_HARNESS_UNKNOWN', `harness "${name}" is not defined; known: ${[...definitions.keys()].join(', ')}`, { details: { field: 'name' } });
        const { folder, fresh } = await installHarness(definition, dir, { log: (line) => console.error(line) });
        console.log(`${name}: ${fresh ? 'installed in' : 'already in'} ${folder}`);
      }
    });
}
