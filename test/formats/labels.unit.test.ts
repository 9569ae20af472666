import { describe, expect, it } from 'vitest';
import { importLabels, importTrajectories, labelKey, labelsFromTrajectories, lookupLabel } from '../../src/formats/index.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realDevstral, realTrajectory, tempFile } from './fixture-path.js';

const V1 = 'acme-agent-v1';
const V2 = 'acme-agent-v2';
const PREDICTIONS = ownFixture('swebench', 'predictions.jsonl');

describe('label importer', () => {
  it('reads the resolved field of candidate rows, keyed by source/instance', async () => {
    const { labels, issues } = await importLabels(PREDICTIONS);
    expect(issues).toEqual([]);
    expect(labels.size).toBe(13);
    expect([...labels.values()].filter(Boolean)).toHaveLength(6);
    expect(lookupLabel(labels, 'django__django-99001', V1)).toBe(true);
    expect(lookupLabel(labels, 'django__django-99002', V1)).toBe(false);
    expect(lookupLabel(labels, 'acme__widgets-102', V2)).toBe(false);
    expect(lookupLabel(labels, 'django__django-99001', V2)).toBeUndefined();
    expect(labels.get(labelKey(V1, 'sympy__sympy-99001'))).toBe(true);
  });

  it('gives the same labels from imported trajectories (meta.resolved)', async () => {
    const { items } = await importTrajectories(PREDICTIONS);
    const fromFile = await importLabels(PREDICTIONS);
    expect(labelsFromTrajectories(items)).toEqual(fromFile.labels);
  });

  it('reads a SWE-bench results.json for a named run: resolved_ids resolved, every other listed id not', async () => {
    const { labels, issues } = await importLabels(ownFixture('swebench', 'results.json'), { source: 'run1' });
    expect(issues).toEqual([]);
    expect(labels.size).toBe(12);
    expect(
      [...labels]
        .filter(([, resolved]) => resolved)
        .map(([key]) => key)
        .sort(),
    ).toEqual(
      ['acme__gadgets-201', 'acme__tools-302', 'acme__widgets-101', 'beta__parser-11', 'django__django-99001', 'sympy__sympy-99001'].map(
        (id) => `run1/${id}`,
      ),
    );
    // the same verdicts as the rows' own `resolved` fields
    const fromRows = await importLabels(PREDICTIONS, { source: 'run1' });
    expect(new Map([...labels].sort())).toEqual(new Map([...fromRows.labels].sort()));
  });

  it('reads SWE-bench run reports: resolved_ids/unresolved_ids and the older results.json lists', async () => {
    const harness = tempFile(
      'run.json',
      JSON.stringify({
        total_instances: 4,
        resolved_ids: ['a__b-1'],
        unresolved_ids: ['a__b-2'],
        error_ids: ['a__b-3'],
        incomplete_ids: ['a__b-4'],
      }),
    );
    const fromHarness = await importLabels(harness, { source: 'run1' });
    expect([...fromHarness.labels]).toEqual([
      ['run1/a__b-1', true],
      ['run1/a__b-2', false],
    ]);
    expect([...fromHarness.couldNotRun]).toEqual(['run1/a__b-3']);
    const older = tempFile(
      'results.json',
      JSON.stringify({ generated: ['x__y-1', 'x__y-2'], applied: ['x__y-1', 'x__y-2'], resolved: ['x__y-2'] }),
    );
    const fromOlder = await importLabels(older, { source: 'run2' });
    expect(Object.fromEntries(fromOlder.labels)).toEqual({ 'run2/x__y-2': true, 'run2/x__y-1': false });
  });

  // Issue 32: the harness's error_ids (instances it could not evaluate) are in submitted_ids too, and
  // were read as unresolved.
  it('never reads an instance the harness could not run as unresolved, whatever other list names it', async () => {
    const report = tempFile(
      'run.json',
      JSON.stringify({
        submitted_ids: ['a__b-1', 'a__b-2', 'a__b-3'],
        completed_ids: ['a__b-1', 'a__b-2'],
        resolved_ids: ['a__b-1'],
        unresolved_ids: ['a__b-2'],
        error_ids: ['a__b-3'],
      }),
    );
    const { labels, couldNotRun } = await importLabels(report, { source: 'run1' });
    expect(Object.fromEntries(labels)).toEqual({ 'run1/a__b-1': true, 'run1/a__b-2': false });
    expect([...couldNotRun]).toEqual(['run1/a__b-3']);
    // A row saying so (resolved: null) is the same; a verdict from another file wins over it.
    const rows = tempFile('labels.jsonl', '{"instance_id":"a__b-2","source":"run1","resolved":null}\n');
    const rerun = tempFile('rerun.jsonl', '{"instance_id":"a__b-3","source":"run1","resolved":true}\n');
    expect([...(await importLabels(rows)).couldNotRun]).toEqual(['run1/a__b-2']);
    const both = await importLabels([report, rerun], { source: 'run1' });
    expect(both.labels.get('run1/a__b-3')).toBe(true);
    expect(both.couldNotRun.size).toBe(0);
  });

  it('reads per-instance report.json files (flat, and keyed by instance id)', async () => {
    const { labels } = await importLabels(ownFixture('mini-swe-agent', 'text', '*.report.json'), { source: 'acme' });
    expect(Object.fromEntries(labels)).toEqual({ 'acme/acme__gadgets-201': false, 'acme/acme__widgets-101': true });
    const keyed = tempFile('report.json', JSON.stringify({ 'acme__widgets-9': { resolved: true, tests_status: {} } }));
    expect(Object.fromEntries((await importLabels(keyed, { source: 's' })).labels)).toEqual({ 's/acme__widgets-9': true });
  });

  it('reports a report without a source, and conflicting labels', async () => {
    const harness = tempFile('run.json', JSON.stringify({ resolved_ids: ['a__b-1'], unresolved_ids: [] }));
    await expect(importLabels(harness)).rejects.toMatchObject({
      code: 'WNW_ERR_INPUT_INVALID',
      details: { field: 'source', record: 'a__b-1' },
    });
    const rows = tempFile(
      'labels.jsonl',
      ['{"instance_id":"a__b-1","source":"s","resolved":true}', '{"instance_id":"a__b-1","source":"s","resolved":false}'].join('\n'),
    );
    const { labels, issues } = await importLabels(rows, { onInvalid: 'skip' });
    expect(labels.get('s/a__b-1')).toBe(true);
    expect(issues).toEqual([expect.objectContaining({ file: rows, line: 2, field: 'resolved' })]);
  });
});

describeRealData('label importer on public samples', 'devstral-verified', () => {
  const DV1 = 'Devstral-Small-2505_nocondenser_swesmith_openhands-instance-prompt-v2_maxsteps50_maxtokens32k_no-demo-v1';
  const DV2 = 'Devstral-Small-2505_nocondenser_swesmith_openhands-instance-prompt-v2_maxsteps50_maxtokens32k_no-demo-v2';

  it('reads the resolved field of the 440 Devstral rows, keyed by source/instance', async () => {
    const { labels, issues } = await importLabels(realDevstral('candidates.jsonl'));
    expect(issues).toEqual([]);
    expect(labels.size).toBe(440);
    expect([...labels.values()].filter(Boolean)).toHaveLength(168);
    expect(lookupLabel(labels, 'django__django-13821', DV1)).toBe(true);
    expect(lookupLabel(labels, 'django__django-16877', DV1)).toBe(false);
    expect(lookupLabel(labels, 'astropy__astropy-13453', DV2)).toBe(false);
    expect(lookupLabel(labels, 'django__django-13821', DV2)).toBeUndefined();
    expect(labels.get(labelKey(DV1, 'sympy__sympy-19637'))).toBe(true);
    const { items } = await importTrajectories(realDevstral('candidates.jsonl'));
    expect(labelsFromTrajectories(items)).toEqual(labels);
  });
});

describeRealData('label importer on public per-instance reports', 'trajectories', () => {
  it('reads flat report.json files', async () => {
    const { labels } = await importLabels(realTrajectory('mini-swe-agent-1_text', '*.report.json'), { source: 'gemini' });
    expect(Object.fromEntries(labels)).toEqual({ 'gemini/django__django-10999': false, 'gemini/scikit-learn__scikit-learn-14141': true });
  });
});
