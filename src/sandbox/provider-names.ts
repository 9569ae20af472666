/** The sandbox providers' names, apart from the registry so that the CLI's start lists them without loading a provider. */
export const SANDBOX_PROVIDERS = ['local', 'orchard', 'docker'] as const;
export type SandboxProviderName = (typeof SANDBOX_PROVIDERS)[number];
