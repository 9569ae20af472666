/** Picks the policy of each rollout from the request, or from the server's default policy. */
import { wnwError } from '../../errors.js';
import { createOpenAIPolicy } from './openai-policy.js';
import type { PolicyOptions } from './policy-options.js';
import { createReplayPolicy } from './replay-policy.js';
import type { Policy } from './types.js';

export interface DefaultPolicy {
  url?: string;
  model?: string;
  api_key?: string;
  mode?: 'tools' | 'text';
  /**
   * Whether a request may name its own policy server (`policy.url`). Off on a shared server, so that
   * clients cannot make it send requests to addresses of their choosing.
   */
  allow_request_urls?: boolean;
}

/** `(options, index) => Policy`, plus `close()` for the OpenAI clients it shares. */
export interface PolicyFactory {
  (requested: PolicyOptions | undefined, index: number): Policy;
  /** The server's default policy (the harness proxy resolves its upstream from it too). */
  readonly defaults: DefaultPolicy;
  /** Closes every shared client (server shutdown, after the jobs have stopped). */
  close(): Promise<void>;
}

/**
 * The policy a request gets: its own (when the server allows its URL) or the server's default.
 * Shared by the built-in agent and the harness proxy, so both enforce `allow_request_urls` alike.
 */
export function resolvePolicyOptions(requested: PolicyOptions | undefined, defaults: DefaultPolicy): PolicyOptions {
  const options: PolicyOptions | undefined =
    requested ??
    (defaults.url
      ? {
          kind: 'openai',
          url: defaults.url,
          model: defaults.model ?? 'default',
          api_key: defaults.api_key,
          mode: defaults.mode ?? 'tools',
          temperature: 0.7,
          top_p: 1,
          max_tokens: 4096,
          timeout_s: 300,
        }
      : undefined);
  if (!options) {
    throw wnwError('WNW_ERR_CFG_INVALID', 'no policy: give `policy` in the request or set WINNOWER_POLICY_URL', {
      details: { field: 'policy' },
    });
  }
  if (requested && requested.kind !== 'replay' && defaults.allow_request_urls === false && requested.url !== defaults.url) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      'policy.url: this server only calls its configured policy server; omit policy.url or use the configured one',
      {
        details: { field: 'policy.url' },
      },
    );
  }
  return options;
}

/** OpenAI clients are shared per configuration so their pools are reused, and closed by `close()`. */
export function createPolicyFactory(defaults: DefaultPolicy = {}): PolicyFactory {
  const clients = new Map<string, Policy>();
  const create = (requested: PolicyOptions | undefined, index: number): Policy => {
    const options = resolvePolicyOptions(requested, defaults);
    if (options.kind === 'anthropic') {
      throw wnwError(
        'WNW_ERR_INPUT_INVALID',
        'policy.kind: anthropic serves harnesses that speak Anthropic Messages (agent.harness: claude-code); the built-in agent needs an OpenAI-compatible server',
        {
          details: { field: 'policy.kind' },
        },
      );
    }
    if (options.kind === 'replay') return createReplayPolicy(options.recordings[index % options.recordings.length]!);
    const key = JSON.stringify([
      options.url,
      options.model,
      options.api_key,
      options.mode,
      options.temperature,
      options.top_p,
      options.max_tokens,
      options.timeout_s,
    ]);
    let policy = clients.get(key);
    if (!policy) {
      policy = createOpenAIPolicy({
        url: options.url,
        model: options.model,
        apiKey: options.api_key,
        temperature: options.temperature,
        topP: options.top_p,
        maxTokens: options.max_tokens,
        mode: options.mode,
        timeoutMs: options.timeout_s * 1000,
      });
      clients.set(key, policy);
    }
    return policy;
  };
  return Object.assign(create, {
    defaults,
    async close() {
      const open = [...clients.values()];
      clients.clear();
      await Promise.all(open.map((policy) => policy.close?.()));
    },
  });
}
