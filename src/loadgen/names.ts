/** Scenario and backend names of `winnower bench`, apart from the runners so that the CLI's start lists them. */
export type ScenarioName = 'score' | 'rerank' | 'solve';
export const SCENARIOS: ScenarioName[] = ['score', 'rerank', 'solve'];

export type BackendKind = 'vllm' | 'sglang';
export const BACKEND_KINDS: BackendKind[] = ['vllm', 'sglang'];
