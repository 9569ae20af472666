/**
 * Picks a sandbox provider by name and loads its module on first use, so that a host without
 * Docker or Orchard never loads their clients (and the local provider never runs elsewhere).
 */
import { wnwError } from '../errors.js';
import { patchSettingsFromConfig, type PatchConfig } from './patch-policy.js';
import type { SandboxProvider } from './types.js';

import { SANDBOX_PROVIDERS, type SandboxProviderName } from './provider-names.js';

export { SANDBOX_PROVIDERS, type SandboxProviderName };

type Factory = (settings: never) => SandboxProvider | Promise<SandboxProvider>;

const loaders: Record<SandboxProviderName, () => Promise<Factory>> = {
  local: async () => (await import('./providers/local/provider.js')).createLocalProvider,
  orchard: async () => (await import('./providers/orchard/provider.js')).createOrchardProvider,
  docker: async () => (await import('./providers/docker/provider.js')).createDockerProvider,
};

/** True for the names createSandboxProvider accepts. */
export function isSandboxProviderName(name: string): name is SandboxProviderName {
  return (SANDBOX_PROVIDERS as readonly string[]).includes(name);
}

/**
 * Creates the provider `name` with its settings (each provider documents and checks its own).
 * `patch` is the config file's `sandbox.patch`, which every provider takes as its `patch` setting
 * (keys given in `settings.patch` win). Unknown names get WNW_ERR_SBX_PROVIDER listing the valid ones.
 */
export async function createSandboxProvider(
  name: string,
  settings: Record<string, unknown> = {},
  patch?: PatchConfig,
): Promise<SandboxProvider> {
  if (!isSandboxProviderName(name)) {
    throw wnwError(
      'WNW_ERR_SBX_PROVIDER',
      `unknown sandbox provider ${JSON.stringify(name)}; use one of: ${SANDBOX_PROVIDERS.join(', ')}`,
      {
        details: { field: 'sandbox.provider', valid: [...SANDBOX_PROVIDERS] },
      },
    );
  }
  const factory = (await loaders[name]()) as (settings: Record<string, unknown>) => SandboxProvider | Promise<SandboxProvider>;
  if (!patch) return factory(settings);
  const own = typeof settings.patch === 'object' && settings.patch !== null ? settings.patch : {};
  return factory({ ...settings, patch: { ...patchSettingsFromConfig(patch), ...own } });
}
