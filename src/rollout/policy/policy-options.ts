/** How a request names its policy: an OpenAI-compatible server, an Anthropic Messages server (harnesses only), or recordings to replay. */
import { z } from 'zod';
import { HeaderSecret } from '../../http/header-value.js';
import { Trajectory } from '../../types/trajectory.js';

/** A recording to replay: a trajectory (unknown top-level keys refused) with at least one assistant turn. */
const Recording = Trajectory.strict().refine((recording) => recording.messages.some((message) => message.role === 'assistant'), {
  message: 'this recording has no assistant turns to replay',
});

export const PolicyOptions = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('openai'),
    /** Base URL of an OpenAI-compatible server, e.g. http://localhost:30000/v1. */
    url: z.url({
      protocol: /^https?$/,
      error: 'http or https only: the base URL of an OpenAI-compatible server, e.g. http://localhost:30000/v1',
    }),
    model: z.string().min(1),
    /** Sent as a header (Bearer, or x-api-key), so visible ASCII only (src/http/header-value.ts). */
    api_key: HeaderSecret.optional(),
    temperature: z.number().min(0).max(2).default(0.7),
    top_p: z.number().gt(0).max(1).default(1),
    max_tokens: z.number().int().positive().default(4096),
    /** `tools` (function calling) or `text` (one fenced bash block per turn). */
    mode: z.enum(['tools', 'text']).default('tools'),
    /** Deadline of one completion, retries included; at most a day (longer timers fire at once). */
    timeout_s: z.number().positive().max(86_400).default(300),
  }),
  z.strictObject({
    /** An Anthropic Messages server, for harnesses that speak that protocol (claude-code). */
    kind: z.literal('anthropic'),
    /** Base URL including the API prefix, e.g. https://api.anthropic.com/v1. */
    url: z.url({
      protocol: /^https?$/,
      error: 'http or https only: the base URL of an Anthropic Messages server, e.g. https://api.anthropic.com/v1',
    }),
    model: z.string().min(1),
    /** Sent as a header (Bearer, or x-api-key), so visible ASCII only (src/http/header-value.ts). */
    api_key: HeaderSecret.optional(),
    /** Set on every call when given; otherwise the harness's own choice stands. */
    temperature: z.number().min(0).max(1).optional(),
    timeout_s: z.number().positive().max(86_400).default(600),
  }),
  z.strictObject({
    kind: z.literal('replay'),
    /** Recorded trajectories; rollout i replays recording i mod length. */
    recordings: z.array(Recording).min(1),
  }),
]);
export type PolicyOptions = z.infer<typeof PolicyOptions>;
