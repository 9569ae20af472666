/**
 * Where the recording proxy sends a harness's model calls: the job's policy server of the same
 * protocol (over the shared undici client: keep-alive, one deadline, retries on transient
 * failures, zod-checked answers, WNW_ERR_POLICY_* errors), or the replay of recorded assistant
 * turns written in that protocol. The upstream key lives here, in the server process only.
 */
import { wnwError } from '../../errors.js';
import { HttpClient } from '../../http/http-client.js';
import type { ChatMessage, Trajectory } from '../../types/trajectory.js';
import type { PolicyOptions } from '../policy/policy-options.js';
import { answerFromMessage } from './from-chat-message.js';
import { PROTOCOLS, upstreamBody, type HarnessProtocol, type Sampling } from './protocols.js';

type Json = Record<string, unknown>;

export interface Upstream {
  /** Shown as the trajectory's source. */
  readonly name: string;
  /**
   * Sends one main-loop request (the harness's body) and returns the checked answer. `headers`
   * are the harness's protocol headers worth passing on (Anthropic's version and betas: a body
   * using a beta feature is refused without its header), never its credentials.
   */
  send(body: Json, options: { signal?: AbortSignal; headers?: Record<string, string> }): Promise<Json>;
  close(): Promise<void>;
}

/** Which policy kinds can serve a protocol: the same wire format, or a replay. */
export function policyKindsFor(protocol: HarnessProtocol): Array<PolicyOptions['kind']> {
  return protocol === 'anthropic-messages' ? ['anthropic', 'replay'] : ['openai', 'replay'];
}

/** A policy of another protocol is an input error naming `policy.kind`. */
export function checkPolicyKind(protocol: HarnessProtocol, policy: PolicyOptions): void {
  if (!policyKindsFor(protocol).includes(policy.kind)) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `policy.kind: a harness speaking ${protocol} needs a policy of kind ${policyKindsFor(protocol).join(' or ')}, not ${policy.kind}`,
      {
        details: { field: 'policy.kind' },
      },
    );
  }
}

export function createUpstream(
  protocol: HarnessProtocol,
  policy: PolicyOptions,
  options: { sampling: Sampling; recordingIndex: number },
): Upstream {
  checkPolicyKind(protocol, policy);
  if (policy.kind === 'replay')
    return createReplayUpstream(protocol, policy.recordings[options.recordingIndex % policy.recordings.length]!);
  const anthropic = policy.kind === 'anthropic';
  // The shared client's headers are fixed per client: one client per set of passed-on headers (a session uses one or two).
  const clients = new Map<string, HttpClient>();
  const clientFor = (passed: Record<string, string>): HttpClient => {
    const key = JSON.stringify(passed);
    let client = clients.get(key);
    if (!client) {
      client = new HttpClient({
        urls: [policy.url],
        ...(anthropic
          ? { headers: { 'anthropic-version': '2023-06-01', ...passed, ...(policy.api_key ? { 'x-api-key': policy.api_key } : {}) } }
          : { apiKey: policy.api_key, headers: passed }),
        timeoutMs: policy.timeout_s * 1000,
        retries: 4,
        errorCodes: { upstream: 'WNW_ERR_POLICY_UPSTREAM', response: 'WNW_ERR_POLICY_RESPONSE', timeout: 'WNW_ERR_POLICY_TIMEOUT' },
      });
      clients.set(key, client);
    }
    return client;
  };
  const temperature = policy.temperature;
  const sampling = { ...options.sampling, ...(temperature === undefined ? {} : { temperature }) };
  return {
    name: `${protocol}:${policy.model}`,
    send: (body, call) =>
      clientFor(call.headers ?? {}).postJson({
        path: PROTOCOLS[protocol].upstreamPath,
        body: upstreamBody(protocol, body, policy.model, sampling),
        schema: PROTOCOLS[protocol].response,
        signal: call.signal,
      }),
    close: async () => {
      await Promise.all([...clients.values()].map((client) => client.close()));
    },
  };
}

/** Answers each main-loop call with the recording's next assistant turn, in the harness's protocol. */
export function createReplayUpstream(protocol: HarnessProtocol, recording: Trajectory): Upstream {
  const turns: ChatMessage[] = recording.messages.filter((message) => message.role === 'assistant');
  let next = 0;
  return {
    name: `replay:${recording.source}`,
    async send(_body, call) {
      call.signal?.throwIfAborted();
      const turn = turns[next];
      if (!turn) {
        throw wnwError(
          'WNW_ERR_POLICY_REPLAY',
          `recording ${recording.id} ended after ${turns.length} turns, and the harness asked for another`,
          { details: { trajectory: recording.id } },
        );
      }
      next += 1;
      const usage = (turn.meta?.usage as { prompt_tokens: number; completion_tokens: number } | undefined) ?? {
        prompt_tokens: 0,
        completion_tokens: 0,
      };
      return answerFromMessage(protocol, turn, { id: `replay-${recording.id}-${next}`, model: recording.source, usage });
    },
    close: async () => undefined,
  };
}
