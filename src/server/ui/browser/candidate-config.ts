/**
 * Which configuration made each rollout (policy source, model, harness, agent, policy mode,
 * temperature, run name; docs/mixed-policies.md), the entries of a mixed-policy job, and which
 * model and selector scored the job (`result.scored_by`): compact labels for the job page.
 */
// Structural types, no DOM: tests run this module under Node (test/server/inspector-config.test.ts).
type Json = Record<string, unknown>;
type JobEvent = Json & { type: string };

export interface RolloutConfig {
  source: string | null;
  config: Json | null;
}

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;

/**
 * Each rollout's configuration, from whatever the job has so far: `result.candidates` once it has a
 * result, the `rollout-start` events while it runs, and the candidates themselves (saved runs).
 */
export function configsByIndex(candidates: Json[], result: Json | null, events: JobEvent[]): Map<number, RolloutConfig> {
  const out = new Map<number, RolloutConfig>();
  const add = (index: unknown, source: unknown, config: unknown) => {
    if (typeof index !== 'number' || !Number.isInteger(index)) return;
    const known = out.get(index) ?? { source: null, config: null };
    out.set(index, {
      source: typeof source === 'string' && source !== '' ? source : known.source,
      config: isRecord(config) && Object.keys(config).length ? config : known.config,
    });
  };
  for (const event of events) if (event.type === 'rollout-start') add(event.index, undefined, event.config);
  for (const candidate of candidates) add(candidate.index, candidate.source, candidate.config);
  for (const candidate of (result && Array.isArray(result.candidates) ? result.candidates : []).filter(isRecord))
    add(candidate.index, candidate.source, candidate.config);
  for (const [index, value] of out) if (value.source === null && value.config === null) out.delete(index);
  return out;
}

/** `gpt-4o · winnower/default · tools · T=0.7 · run fast`: the configuration in one line. */
export function configLabel(config: Json | null): string {
  if (!config) return '';
  const model = text(config.model);
  const harness = text(config.harness);
  const agent = text(config.agent);
  const temperature = text(config.temperature);
  const parts = [
    text(config.run) ? `run ${text(config.run)}` : null,
    model,
    harness && agent ? `${harness}/${agent}` : (harness ?? agent),
    text(config.harness_model) ? `as ${text(config.harness_model)}` : null,
    text(config.policy_mode),
    temperature === null ? null : `T=${temperature}`,
  ];
  const named = new Set(['run', 'model', 'harness', 'agent', 'harness_model', 'policy_mode', 'temperature']);
  // A key this page does not know by name is still shown.
  const others = Object.entries(config)
    .filter(([key, value]) => !named.has(key) && value !== null && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return [...parts, ...others].filter((part): part is string => part !== null).join(' · ');
}

/** The full configuration, for a tooltip. */
export function configTitle(entry: RolloutConfig): string {
  return [
    entry.source ? `source: ${entry.source}` : null,
    ...Object.entries(entry.config ?? {}).map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`),
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * A mixed-policy job's entries, from its `job-start` event (`policies: [{index, n, waves, config}]`);
 * without that event (a saved job), its rollouts' configurations with their counts when there are
 * two or more (sources alone differ in a one-policy replay job: not listed).
 */
export function policyLines(
  events: JobEvent[],
  configs: Map<number, RolloutConfig>,
): { name: 'policies' | 'configurations'; lines: string[] } {
  const start = events.find((event) => event.type === 'job-start' && Array.isArray(event.policies));
  if (start) {
    return {
      name: 'policies',
      lines: (start.policies as unknown[]).filter(isRecord).map((entry) => {
        const waves = Array.isArray(entry.waves) && entry.waves.length > 1 ? ` in waves ${entry.waves.map(String).join('+')}` : '';
        return `#${String(entry.index)}: ${String(entry.n)}× ${configLabel(isRecord(entry.config) ? entry.config : null) || '—'}${waves}`;
      }),
    };
  }
  const counts = new Map<string, number>();
  for (const entry of configs.values()) {
    const label = configLabel(entry.config);
    if (label) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return { name: 'configurations', lines: counts.size > 1 ? [...counts].map(([label, count]) => `${count}× ${label}`) : [] };
}

/** `scored_by` in one line: model name and short hash, selector strategy (and its default), backend. */
export function scoredByLabel(scoredBy: unknown): string | null {
  if (!isRecord(scoredBy)) return null;
  const shortHash = (hash: unknown) => (typeof hash === 'string' ? hash.replace(/^sha256:/, '').slice(0, 12) : null);
  const model = isRecord(scoredBy.model) ? scoredBy.model : null;
  const selector = isRecord(scoredBy.selector) ? scoredBy.selector : null;
  const scorer = isRecord(scoredBy.scorer) ? scoredBy.scorer : null;
  const modelName = model ? text(model.name) : text(scoredBy.model);
  const modelHash = model ? shortHash(model.hash) : null;
  const strategy = selector ? text(selector.strategy) : text(scoredBy.selector);
  const fallback = selector ? text(selector.default_strategy) : null;
  const selectorHash = selector ? shortHash(selector.hash) : null;
  const parts = [
    `model ${modelName ?? '—'}${modelHash ? ` (${modelHash})` : ''}`,
    `selector ${strategy ?? 'none'}${fallback && fallback !== strategy ? ` (default ${fallback})` : ''}${selectorHash ? ` (selector.json ${selectorHash})` : ''}`,
    scorer && text(scorer.backend) ? `backend ${text(scorer.backend)}` : null,
  ];
  return parts.filter(Boolean).join(' · ');
}
