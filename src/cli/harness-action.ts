/** What `winnower harness list | install` do; loaded only when one runs (harness.ts registers them). */
import { createHarnessCatalog } from '../rollout/harness/harness-catalog.js';
import { loadHarnessDefinitions } from '../rollout/harness/harness-definition.js';
import { installHarness } from '../rollout/harness/harness-install.js';
import { wnwError } from '../errors.js';

export function listHarnesses(): void {
  const catalog = createHarnessCatalog();
  console.log(`harness folder: ${catalog.installDir}`);
  for (const status of catalog.list()) {
    const what = status.package ? `${status.package}@${status.version}` : status.source;
    console.log(
      `${status.available ? 'ready  ' : 'missing'}  ${status.name.padEnd(12)} ${status.protocol.padEnd(19)} ${what}${status.available ? '' : `  → ${status.install_command ?? status.reason}`}`,
    );
  }
}

export async function installHarnesses(names: string[]): Promise<void> {
  const definitions = loadHarnessDefinitions().external;
  const dir = createHarnessCatalog().installDir;
  for (const name of names) {
    const definition = definitions.get(name);
    if (!definition)
      throw wnwError('WNW_ERR_HARNESS_UNKNOWN', `harness "${name}" is not defined; known: ${[...definitions.keys()].join(', ')}`, {
        details: { field: 'name' },
      });
    const { folder, fresh } = await installHarness(definition, dir, { log: (line) => console.error(line) });
    console.log(`${name}: ${fresh ? 'installed in' : 'already in'} ${folder}`);
  }
}
