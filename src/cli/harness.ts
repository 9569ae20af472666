/**
 * `winnower harness list | install <name...>`: which agent harnesses this machine can run, and
 * installing their pinned CLIs from the npm registry into the harness folder (outside the
 * repository; WINNOWER_HARNESS_DIR overrides it), where `solve --harness` and the server find them.
 */
import type { Command } from 'commander';

export function registerHarnessCommand(program: Command): void {
  const harness = program.command('harness').description('list agent harnesses (pi, codex, claude-code, ...) and install their CLIs');

  harness
    .command('list')
    .description('every harness definition, and whether this machine can run it')
    .action(async () => (await import('./harness-action.js')).listHarnesses());

  harness
    .command('install')
    .description(
      'install the pinned CLI of each named harness from the npm registry (kept while that version is there) into WINNOWER_HARNESS_DIR, else /var/cache/winnower/harnesses as root, else ~/.cache/winnower/harnesses',
    )
    .argument('<names...>', 'harness names, e.g. pi claude-code')
    .action(async (names: string[]) => (await import('./harness-action.js')).installHarnesses(names));
}
