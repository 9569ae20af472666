/**
 * The job page's labels for what made each rollout (`result.candidates[].source`/`.config`, the
 * `rollout-start` and `job-start` events of a mixed-policy job; docs/mixed-policies.md) and which
 * model and selector scored the job (`result.scored_by`). Pure functions of the job's JSON, so
 * they run here without a browser; test/cli/inspect.test.ts checks them drawn in the page.
 */
import { describe, expect, it } from 'vitest';
import { configLabel, configsByIndex, configTitle, policyLines, scoredByLabel } from '../../src/server/ui/browser/candidate-config.js';

const FAST = { model: 'gpt-4o-mini', harness: 'winnower', agent: 'default', policy_mode: 'tools', temperature: 0.7, run: 'fast' };
const CAREFUL = { model: 'qwen2.5-coder', harness: 'winnower', agent: 'default', policy_mode: 'text', temperature: 0, run: 'careful' };
const SCORED_BY = {
  model: { name: 'winnower-value-v3', path: '/models/v3', hash: 'sha256:0123456789abcdef0123456789abcdef' },
  selector: {
    path: '/models/v3/selector.json',
    hash: 'sha256:fedcba9876543210fedcba9876543210',
    default_strategy: 'learned',
    strategy: 'robust',
  },
  scorer: { backend: 'onnx', urls: [] },
};

describe('inspector: rollout configurations and scored_by', () => {
  it('takes each rollout configuration from the result, from rollout-start events while running, and from saved candidates', () => {
    const result = {
      candidates: [
        { index: 0, source: 'openai:gpt-4o-mini', config: FAST },
        { index: 1, source: null, config: null },
      ],
    };
    const events = [
      { type: 'rollout-start', index: 1, policy: 1, config: CAREFUL },
      { type: 'rollout-start', index: 2, policy: 0, config: FAST },
    ];
    const configs = configsByIndex([{ index: 3, source: 'replay:demo' }], result, events);
    expect(configs.get(0)).toEqual({ source: 'openai:gpt-4o-mini', config: FAST });
    expect(configs.get(1)).toEqual({ source: null, config: CAREFUL });
    expect(configs.get(2)).toEqual({ source: null, config: FAST });
    expect(configs.get(3)).toEqual({ source: 'replay:demo', config: null });
    expect(configsByIndex([], null, []).size).toBe(0);
  });

  it('labels a configuration compactly, every field in the tooltip', () => {
    expect(configLabel(FAST)).toBe('run fast · gpt-4o-mini · winnower/default · tools · T=0.7');
    expect(configLabel({ model: 'claude', harness: 'mini-swe-agent', harness_model: 'anthropic/claude', extra: 1 })).toBe(
      'claude · mini-swe-agent · as anthropic/claude · extra=1',
    );
    expect(configTitle({ source: 'openai:gpt-4o-mini', config: FAST })).toContain('source: openai:gpt-4o-mini\nmodel: gpt-4o-mini');
  });

  it("lists a mixed job's policies from its job-start event, else the distinct configurations of its rollouts", () => {
    const start = {
      type: 'job-start',
      n: 4,
      waves: [4],
      policies: [
        { index: 0, n: 3, waves: [1, 2], config: FAST },
        { index: 1, n: 1, waves: [1], config: CAREFUL },
      ],
    };
    expect(policyLines([start], new Map())).toEqual({
      name: 'policies',
      lines: [
        '#0: 3× run fast · gpt-4o-mini · winnower/default · tools · T=0.7 in waves 1+2',
        '#1: 1× run careful · qwen2.5-coder · winnower/default · text · T=0',
      ],
    });
    const configs = configsByIndex(
      [],
      {
        candidates: [
          { index: 0, source: 'a', config: FAST },
          { index: 1, source: 'a', config: FAST },
          { index: 2, source: 'b', config: CAREFUL },
        ],
      },
      [],
    );
    expect(policyLines([], configs)).toEqual({
      name: 'configurations',
      lines: [
        '2× run fast · gpt-4o-mini · winnower/default · tools · T=0.7',
        '1× run careful · qwen2.5-coder · winnower/default · text · T=0',
      ],
    });
    // One configuration (a one-policy replay job whose recordings differ only in source): nothing to list.
    const replay = { model: 'replay', harness: 'winnower', agent: 'default' };
    expect(
      policyLines(
        [],
        configsByIndex(
          [],
          {
            candidates: [
              { index: 0, source: 'replay:a', config: replay },
              { index: 1, source: 'replay:b', config: replay },
            ],
          },
          [],
        ),
      ).lines,
    ).toEqual([]);
  });

  it('says which model (name, short hash) and selector strategy scored the job', () => {
    expect(scoredByLabel(SCORED_BY)).toBe(
      'model winnower-value-v3 (0123456789ab) · selector robust (default learned) (selector.json fedcba987654) · backend onnx',
    );
    expect(scoredByLabel({ ...SCORED_BY, selector: { path: null, hash: null, default_strategy: null, strategy: 'max' } })).toBe(
      'model winnower-value-v3 (0123456789ab) · selector max · backend onnx',
    );
    expect(scoredByLabel(null)).toBeNull();
  });
});
