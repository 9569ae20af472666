/**
 * A harness rollout's Trajectory, rebuilt from the proxy's recording: the conversation of the
 * last main-loop request (the harness sends its whole history each call) plus the answer to it,
 * in OpenAI-chat form; usage summed over every call; each exchange (with the recorded answer)
 * and the harness's exit code and output tails in `meta`.
 */
import type { ExitReason, Trajectory } from '../../types/index.js';
import { TRAJECTORY_FORMAT } from '../../types/trajectory.js';
import type { RecordingProxy } from '../proxy/recording-proxy.js';
import { requestMessages, responseMessages } from '../proxy/to-chat-messages.js';
import type { HarnessDefinition } from './harness-definition.js';

export interface HarnessOutcome {
  exit: ExitReason;
  exitRaw: string;
  patch: string;
  /** Exit code, output tails, error, timings: merged into meta. */
  meta: Record<string, unknown>;
}

export function harnessTrajectory(
  proxy: RecordingProxy,
  context: { definition: HarnessDefinition; trajectoryId: string; instanceId: string; source: string; seed: number; startedAt: number },
  outcome: HarnessOutcome,
): Trajectory {
  const { protocol } = context.definition;
  const { request, response } = proxy.last;
  const main = proxy.exchanges.filter((exchange) => exchange.kind === 'main');
  const answer = response
    ? responseMessages(protocol, response).map((message) => ({
        ...message,
        meta: { ...message.meta, exchange: main.at(-1)?.index, usage: main.at(-1)?.usage },
      }))
    : [];
  return {
    format: TRAJECTORY_FORMAT,
    id: context.trajectoryId,
    instance_id: context.instanceId,
    source: context.source,
    messages: [...(request ? requestMessages(protocol, request) : []), ...answer],
    patch: outcome.patch,
    exit: outcome.exit,
    exit_raw: outcome.exitRaw,
    usage: { ...proxy.usage },
    meta: {
      agent: `harness:${context.definition.name}`,
      harness: context.definition.name,
      harness_version: context.definition.source.kind === 'npm' ? context.definition.source.version : undefined,
      protocol,
      seed: context.seed,
      steps: main.length,
      side_calls: proxy.exchanges.length - main.length,
      exchanges: proxy.exchanges,
      started_at: new Date(context.startedAt).toISOString(),
      duration_ms: Date.now() - context.startedAt,
      ...outcome.meta,
    },
  };
}
