/**
 * The requests `winnower bench` sends: `/score` and `/rerank` with N synthetic candidates of a
 * chosen length, `/solve?wait=true` on the demo task with a policy stub. Each body holds one
 * place for a per-request number (in the issue text, which every candidate's serialization
 * starts with), so no two requests score the same text.
 */
import { demoSolveBody } from '../cli/demo-task.js';
import type { LoadRequest } from './load.js';
import { syntheticTrajectory } from './synthetic-trajectory.js';

import { SCENARIOS, type ScenarioName } from './names.js';

export { SCENARIOS, type ScenarioName };

const MARKER = '\u0000request-number\u0000';

/**
 * Characters per token of the synthetic text with the bundled model's tokenizer (measured:
 * 5.0–5.4); the server's own count is reported from the warm-up's scores.
 */
const CHARS_PER_TOKEN = 5.1;

/** A candidate of about `tokens` tokens: turns are added until its text is long enough. */
function candidateOfTokens(tokens: number, seed: number) {
  let turns = 1;
  for (;;) {
    const { task, trajectory } = syntheticTrajectory(turns, seed);
    const chars = trajectory.messages.reduce(
      (sum, message) => sum + (message.content?.length ?? 0) + JSON.stringify(message.tool_calls ?? []).length,
      0,
    );
    if (chars >= tokens * CHARS_PER_TOKEN || turns >= 400) return { task, trajectory };
    turns += Math.max(1, Math.floor(((tokens * CHARS_PER_TOKEN - chars) / chars) * turns * 0.9));
  }
}

/** The marker as it appears inside a JSON string. */
const ENCODED_MARKER = JSON.stringify(MARKER).slice(1, -1);

function split(json: string): [string, string] {
  const at = json.indexOf(ENCODED_MARKER);
  return [json.slice(0, at), json.slice(at + ENCODED_MARKER.length)];
}

/** The JSON of a /score or /rerank body with `candidates` candidates of about `tokens` tokens each. */
export function scoringBody(options: { candidates: number; tokens: number; strategy?: string }): [string, string] {
  const candidates = Array.from({ length: options.candidates }, (_, index) => candidateOfTokens(options.tokens, 1000 + index));
  const { task } = candidates[0]!;
  const body = {
    task: { instance_id: task.instance_id, problem_statement: `${task.problem_statement}\n(bench request ${MARKER})` },
    candidates: candidates.map(({ trajectory }, index) => ({
      id: `bench-${index}`,
      messages: trajectory.messages,
      patch: trajectory.patch,
      exit: trajectory.exit,
    })),
    ...(options.strategy ? { strategy: options.strategy } : {}),
  };
  return split(JSON.stringify(body));
}

export interface SolveScenarioOptions {
  /** The demo repository as the server sees it. */
  repo: string;
  /** Base URL (with /v1) of the policy stub. */
  policyUrl: string;
  n: number;
  verify: boolean;
}

/** The /solve body: the demo task, N rollouts of the stub policy. The number goes in the issue text. */
export function solveBody(options: SolveScenarioOptions): [string, string] {
  const body = demoSolveBody(
    options.repo,
    { verifyTimeoutS: 120, agent: { time_limit_s: 300, command_timeout_s: 60 } },
    {
      n: options.n,
      policy: { kind: 'openai', url: options.policyUrl, model: 'bench-stub' },
    },
  );
  if (!options.verify) body.verify = { enabled: false };
  const issue = `${String(body.issue)}\n(bench request ${MARKER})`;
  return split(JSON.stringify({ ...body, issue }));
}

/** A /score or /rerank answer with a candidate left unscored (an error in place of its score), or not an answer of those at all. */
export function unscored(body: string): boolean {
  try {
    const scores = (JSON.parse(body) as { scores?: unknown }).scores;
    return (
      !Array.isArray(scores) || scores.some((score) => typeof score !== 'object' || score === null || (score as { error?: unknown }).error)
    );
  } catch {
    return true;
  }
}

export function scenarioRequest(scenario: ScenarioName, bodyParts: [string, string], apiKey: string | undefined): LoadRequest {
  return {
    method: 'POST',
    path: scenario === 'solve' ? '/solve?wait=true' : `/${scenario}`,
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    bodyParts,
    ...(scenario === 'solve' ? {} : { failedAnswer: unscored }),
  };
}
