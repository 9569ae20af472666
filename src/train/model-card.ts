/**
 * The model folder's `config.json` (Hugging Face fields the onnx scorer reads, plus a `winnower`
 * section that is the model card: template, budget, features, selector, each data source with
 * its licence, validation figures, seed, the exact command) and a README.md rendering of it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LearnedSelector } from '../select/strategies/learned.js';
import { DEFAULT_PATCH_TEMPLATE, DEFAULT_TEMPLATE } from '../scoring/score-candidates.js';
import { formatTables, type ScopeTable } from './evaluate.js';
import type { FeatureSpace } from './features.js';
import type { Calibration } from './onnx-export.js';
import type { ValueModelShape } from './value-model.js';

export interface DataSource {
  origin: string;
  license: string | null;
  permissive: boolean | null;
  candidates: number;
  instances: number;
  runs: string[];
}

/** Whether the learned selector and the robust default reach the best trivial selector on one split. */
export interface SplitVerdict {
  split: string;
  /** Training saw none of the sources validated on. */
  source_held_out: boolean;
  pools: number;
  best_trivial: string;
  best_trivial_selected: number | null;
  learned_selected: number | null;
  robust_selected: number | null;
  learned_beats_trivial: boolean;
  robust_reaches_trivial: boolean;
}

export interface ModelCardInput {
  outDir: string;
  space: FeatureSpace;
  shape: ValueModelShape;
  budgetTokens: number;
  padTokenId: number;
  seed: number;
  epochs: number;
  folds: number;
  calibration: Calibration;
  selector: LearnedSelector;
  sources: DataSource[];
  trainCandidates: number;
  validationCandidates: number;
  tables: ScopeTable[];
  verdicts: SplitVerdict[];
  command: string;
  seconds: number;
  options: { permissiveOnly?: boolean; holdoutRepos?: string[]; holdoutSources?: string[]; validationFraction?: number };
}

export async function writeModelCard(input: ModelCardInput): Promise<void> {
  const config = {
    architectures: ['WinnowerValueForSequenceClassification'],
    model_type: 'winnower-value',
    num_labels: 1,
    id2label: { '0': 'RESOLVED' },
    label2id: { RESOLVED: 0 },
    // One logit read through a sigmoid: Hugging Face's name for that head is multi-label.
    problem_type: 'multi_label_classification',
    vocab_size: input.space.vocabSize,
    max_position_embeddings: input.budgetTokens,
    pad_token_id: input.padTokenId,
    torch_dtype: 'float32',
    winnower: {
      trained: true,
      builder: 'winnower train (src/train)',
      command: input.command,
      seed: input.seed,
      templates: { trajectory: DEFAULT_TEMPLATE, patch: DEFAULT_PATCH_TEMPLATE },
      budget_tokens: input.budgetTokens,
      features: {
        kind: 'embedding bag: token slots (issue/trajectory vs patch) and hashed bigrams, summed and divided by the square root of the length, plus log length',
        vocab_size: input.space.vocabSize,
        bigram_buckets: input.space.bigramBuckets,
        embedding_dims: input.shape.dims,
        hidden: input.shape.hidden,
      },
      training: {
        loss: 'logistic + within-instance pairwise ranking',
        epochs: input.epochs,
        folds: input.folds,
        calibration: { method: 'Platt scaling on out-of-fold logits', ...input.calibration },
        train_candidates: input.trainCandidates,
        validation_candidates: input.validationCandidates,
        permissive_only: input.options.permissiveOnly ?? false,
        split: input.options.holdoutSources?.length
          ? { holdout_sources: input.options.holdoutSources }
          : input.options.holdoutRepos?.length
            ? { holdout_repos: input.options.holdoutRepos }
            : { by: 'instance', validation_fraction: input.options.validationFraction ?? 0.2 },
        seconds: Math.round(input.seconds * 10) / 10,
      },
      selector: {
        file: 'selector.json',
        how: 'listwise softmax over each training pool with both outcomes, on out-of-fold values; signals the data never varied keep a stated prior (learned: false)',
        weights: Object.fromEntries(
          input.selector.signals.map((s) => [s.name, { weight: Math.round(s.weight * 1000) / 1000, learned: s.learned }]),
        ),
        default_strategy: input.selector.default_strategy ?? null,
        default_reason: input.selector.default_reason ?? null,
        trajectory_weights: input.selector.trajectory ?? null,
      },
      beats_best_trivial: input.verdicts,
      data: input.sources,
      validation: input.tables,
    },
  };
  await writeFile(join(input.outDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  await writeFile(join(input.outDir, 'README.md'), readme(input));
}

function readme(input: ModelCardInput): string {
  const sources = input.sources
    .map(
      (s) =>
        `| ${s.origin} | ${s.license ?? 'not stated'} | ${s.permissive === null ? 'unknown' : s.permissive ? 'yes' : 'no'} | ${s.candidates} | ${s.instances} |`,
    )
    .join('\n');
  const weights = input.selector.signals
    .map((s) => `| ${s.name} | ${s.weight.toFixed(3)} | ${s.learned ? 'learned' : 'prior (not in the training data)'} |`)
    .join('\n');
  return `# winnower value model

Built by \`winnower train\`; do not edit by hand. Rebuild with:

\`\`\`
${input.command}
\`\`\`

- **Input**: the candidate serialized with \`${DEFAULT_TEMPLATE}\` (trajectory) or \`${DEFAULT_PATCH_TEMPLATE}\` (patch only) under ${input.budgetTokens} tokens, tokenized with \`tokenizer.json\` (WordLevel, ${input.space.vocabSize} entries, learned from the training side).
- **Model** (\`model.onnx\`, opset 13, \`input_ids\`/\`attention_mask\` → \`logits\` [batch, 1]): an embedding bag over token slots (issue and trajectory words apart from patch words) and ${input.space.bigramBuckets} hashed bigram buckets, ${input.shape.dims} dimensions, summed and divided by √length, with log length, into a ${input.shape.hidden}-unit ReLU layer; value = sigmoid(logit), calibrated by Platt scaling on out-of-fold logits (a ${input.calibration.a.toFixed(3)}, b ${input.calibration.b.toFixed(3)}).
- **Training**: logistic + within-instance pairwise ranking loss, ${input.epochs} epoch(s) (chosen by ${input.folds}-fold cross-fitting), seed ${input.seed}, ${input.trainCandidates} training candidates${input.options.permissiveOnly ? ', permissive rows only' : ''}; ${Math.round(input.seconds)} s.
- **Selector** (\`selector.json\`, strategy \`learned\`): a linear score over standardised group signals, fitted with a listwise loss on out-of-fold values.
- **Trajectory weights** (\`selector.json\` \`trajectory\`): ${input.selector.trajectory ? `${input.selector.trajectory.use ? 'used' : 'not used'}: ${input.selector.trajectory.reason}.` : 'none: no training pool with both outcomes had trajectories, so robust and learned keep their fixed trajectory priors.'}

## Data

| source | licence | permissive | candidates | instances |
|---|---|---|---|---|
${sources}

## Default strategy

${defaultSection(input)}

## Selector weights

| signal | weight | |
|---|---|---|
${weights}

## Validation (${input.validationCandidates} candidates)

${input.tables.length ? formatTables(input.tables) : '(no validation split)'}
`;
}

function defaultSection(input: ModelCardInput): string {
  const strategy = input.selector.default_strategy ?? 'learned';
  const rows = input.verdicts
    .map(
      (v) =>
        `| ${v.split} | ${v.source_held_out ? 'yes' : 'no'} | ${v.pools} | ${v.best_trivial} ${pctOf(v.best_trivial_selected)} | ${pctOf(v.learned_selected)} (${v.learned_beats_trivial ? 'beats it' : 'does not beat it'}) | ${pctOf(v.robust_selected)} (${v.robust_reaches_trivial ? 'at or above' : 'below'}) |`,
    )
    .join('\n');
  const table = rows
    ? `\n\n| split | sources unseen | pools | best trivial selector, selected@1 % | learned selector | robust |\n|---|---|---|---|---|---|\n${rows}`
    : '';
  return `A request that names no strategy gets **${strategy}**: ${input.selector.default_reason ?? 'written before the check existed'}.${table}`;
}

function pctOf(x: number | null): string {
  return x === null ? 'n/a' : (100 * x).toFixed(1);
}
