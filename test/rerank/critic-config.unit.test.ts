/** examples/config/openhands-critic.yaml: a valid configuration whose scorer settings build a working critic scorer. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ScorerConfig } from '../../src/scoring/registry.js';
import { loadValueModel } from '../../src/scoring/value-model.js';
import { startFakeVllm } from '../fakes/fake-vllm.js';
import { QWEN3_TOKENIZER, QWEN3_TOKENIZER_CONFIG, textInputs } from '../scoring/http/helpers.js';

describe('examples/config/openhands-critic.yaml', () => {
  it('is a valid configuration, and its scorer settings score against a vLLM serving the critic', async () => {
    const file = new URL('../../examples/config/openhands-critic.yaml', import.meta.url).pathname;
    const config = loadConfig({ file, env: {} });
    expect(config.scorer).toMatchObject({
      backend: 'vllm',
      model: 'critic',
      labels: 'openhands-critic',
      template: 'openhands-critic-v1',
      labelIndex: 0,
    });
    expect(ScorerConfig.safeParse(config.scorer).success).toBe(true);
    const server = await startFakeVllm({ model: 'critic', numLabels: 27, maxModelLen: 65_536 });
    // The model folders of the example are the user's download; here the Qwen3 files from node_modules stand in.
    const { scorer, template } = await loadValueModel({
      ...(config.scorer as ScorerConfig),
      urls: [server.url],
      tokenizer: QWEN3_TOKENIZER,
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
    });
    try {
      expect(template).toBe('openhands-critic-v1');
      const [output] = await scorer.score(textInputs(1));
      expect(output!.value).toBeCloseTo(1 / (1 + Math.exp(-output!.raw)), 12);
    } finally {
      await scorer.close();
      await server.close();
    }
  });
});
