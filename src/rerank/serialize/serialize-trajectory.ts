/**
 * Serializes a candidate for a value model under a token budget. Every piece is counted in one
 * batched call (counts only); the cuts are chosen by arithmetic on those counts (fit-budget.ts); the final
 * text is encoded once, so `inputIds` and `inputTokens` are exact. When joins between pieces
 * tokenize differently and the final count exceeds the budget, the plan is tightened and redone
 * (at most MAX_ATTEMPTS encodes of the final text).
 */
import { throwIfAborted, wnwError } from '../../errors.js';
import type { Task } from '../../types/task.js';
import type { Trajectory } from '../../types/trajectory.js';
import { countDocument, estimateCounter, tokenizerCounter, type DocumentCounts, type FinalCount } from './count-document.js';
import { fitSteps, waterFill, type StepPlan } from './fit-budget.js';
import { headTail, type Elided } from './head-tail.js';
import { buildDocument, type SerializationDocument } from './serialize-document.js';
import { loadTemplate } from './template-registry.js';
import { TemplateSettings } from './template-schema.js';
import type { Serialized, SerializeOptions } from './types.js';

const MAX_ATTEMPTS = 4;

/** The instance piece as every candidate of the task gets it (the issue capped at its budget share). */
interface Prefix {
  instance: string;
  /** The issue as rendered (whole, or head + tail). */
  issue: string;
  tokens: number;
  cut: boolean;
}

/** A plan plus the last-resort head/tail cuts. */
interface Layout {
  plan: StepPlan;
  prefix: Prefix;
  patch?: string;
  /** Step position → cut action. */
  actions: Map<number, string>;
  /** `step:observation` positions → cut observation text. */
  observations: Map<string, string>;
}

export async function serializeTrajectory(task: Task, trajectory: Trajectory, options: SerializeOptions): Promise<Serialized> {
  const budget = options.budgetTokens;
  if (!Number.isInteger(budget) || budget <= 0) {
    throw wnwError('WNW_ERR_CFG_INVALID', `budgetTokens must be a positive integer, got ${budget}`, { details: { field: 'budgetTokens' } });
  }
  throwIfAborted(options.signal);
  const template = loadTemplate(options.template, { dirs: options.templateDirs });
  const settings = resolveSettings(template.defaults, options.settings);
  const document = buildDocument(task, trajectory, template, settings);
  const counter = options.tokenizer ? tokenizerCounter(options.tokenizer) : estimateCounter(settings.chars_per_token);
  const issueCap = Math.floor(settings.issue_max_share * budget);
  const uncut = uncutLayout(document);
  const uncutText = assemble(document, uncut);
  let whole: FinalCount | undefined;
  if (!counter.estimated && uncutText.text.length / settings.chars_per_token <= budget) {
    // Probably fits uncut: encode the whole text (and the issue, to check its cap) before any piece.
    const quick = await counter.count([document.instance, document.render.instance('')], uncutText.text);
    throwIfAborted(options.signal);
    whole = quick.whole!;
    if (whole.tokens <= budget && quick.tokens[0]! - quick.tokens[1]! <= issueCap) {
      return result(template.name, uncutText, whole, counter.estimated, whole.tokens, uncut);
    }
  }
  const counts = await countDocument(document, counter);
  throwIfAborted(options.signal);
  if (whole !== undefined) counts.tokensBefore = whole.tokens;

  const headShare = settings.observation_head_chars / Math.max(1, settings.observation_head_chars + settings.observation_tail_chars);
  const shrink = (raw: string, chars: number, tokens: number, keepTokens: number): string => {
    const keepChars = Math.floor((keepTokens * chars) / Math.max(1, tokens));
    const head = Math.round(keepChars * headShare);
    return headTail(raw, head, keepChars - head, (elided: Elided) => document.render.textMarker(elided)) ?? raw;
  };

  const prefix = fitIssue(document, counts, issueCap, shrink);
  // Pieces count a little more apart than joined: when their sum is that close, try the whole text.
  const joins = 6 + document.steps.reduce((sum, step) => sum + 1 + step.observations.length, 0);
  if (!prefix.cut && whole === undefined && counts.tokensBefore <= budget + joins) {
    const final = await counter.countFinal(uncutText.text);
    throwIfAborted(options.signal);
    if (final.tokens <= budget) return result(template.name, uncutText, final, counter.estimated, final.tokens, uncut);
  }
  let effective = budget;
  for (let attempt = 1; ; attempt += 1) {
    const layout = planLayout(document, counts, prefix, effective, settings, shrink);
    const { text, prefixChars } = assemble(document, layout);
    const final = await counter.countFinal(text);
    throwIfAborted(options.signal);
    if (final.tokens <= budget) return result(template.name, { text, prefixChars }, final, counter.estimated, counts.tokensBefore, layout);
    if (attempt === MAX_ATTEMPTS) {
      throw wnwError('WNW_ERR_OP_INTERNAL', `could not fit ${trajectory.id} into ${budget} tokens after ${attempt} attempts (last: ${final.tokens})`, {
        details: { trajectory_id: trajectory.id, budgetTokens: budget, tokens: final.tokens },
      });
    }
    effective -= (final.tokens - budget) * attempt;
  }
}

function uncutLayout(document: SerializationDocument): Layout {
  const plan: StepPlan = {
    elided: document.steps.map(() => false),
    cut: document.steps.map((step) => step.observations.map(() => false)),
    dropped: null,
    tokens: 0,
  };
  const prefix: Prefix = { instance: document.instance, issue: document.problemStatement, tokens: 0, cut: false };
  return { plan, prefix, actions: new Map(), observations: new Map() };
}

function resolveSettings(defaults: TemplateSettings, overrides: Partial<TemplateSettings> | undefined): TemplateSettings {
  if (overrides === undefined) return defaults;
  const parsed = TemplateSettings.partial().safeParse(overrides);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['settings', ...issue.path].join('.');
    throw wnwError('WNW_ERR_CFG_INVALID', `${field}: ${issue.message}`, { details: { field } });
  }
  return { ...defaults, ...parsed.data };
}

type Shrink = (raw: string, chars: number, tokens: number, keepTokens: number) => string;

/** Caps the issue at `cap` tokens; depends on the task and budget only, so the prefix is shared. */
function fitIssue(document: SerializationDocument, counts: DocumentCounts, cap: number, shrink: Shrink): Prefix {
  const issueTokens = counts.instance - counts.instanceWrapper;
  const issue = document.problemStatement;
  if (issueTokens <= cap) return { instance: document.instance, issue, tokens: counts.instance, cut: false };
  const keep = Math.max(0, cap - counts.textMarker);
  const cut = shrink(issue, issue.length, issueTokens, keep);
  return { instance: document.render.instance(cut), issue: cut, tokens: counts.instanceWrapper + keep + counts.textMarker, cut: cut !== issue };
}

interface Item {
  tokens: number;
  chars: number;
  raw: string;
  apply(text: string): void;
}

function planLayout(document: SerializationDocument, counts: DocumentCounts, prefix: Prefix, budget: number, settings: TemplateSettings, shrink: Shrink): Layout {
  const fixed = counts.system + prefix.tokens + counts.question + counts.patch + counts.noSteps;
  const input = { fixed, steps: counts.steps, stepsMarker: counts.stepsMarker, keepFirst: settings.keep_first_steps, keepLast: settings.keep_last_steps };
  const layout: Layout = { plan: fitSteps(input, budget), prefix, actions: new Map(), observations: new Map() };
  if (layout.plan.tokens <= budget) return layout;

  // Last resort: cut the patch and what is left of the kept steps to head + tail, evenly.
  const patchItem: Item = {
    tokens: counts.patch - counts.patchWrapper,
    chars: document.patchText.length,
    raw: document.patchText,
    apply: (text) => (layout.patch = text),
  };
  const stepItems = document.steps.flatMap((step, position): Item[] => {
    if (isDropped(layout.plan, position)) return [];
    const elided = layout.plan.elided[position]!;
    const stepText = elided ? step.elided : step.full;
    const stepTokens = elided ? counts.steps[position]!.elided : counts.steps[position]!.full;
    const action: Item = {
      tokens: Math.round((stepTokens * step.step.action.length) / Math.max(1, stepText.length)),
      chars: step.step.action.length,
      raw: step.step.action,
      apply: (text) => layout.actions.set(position, text),
    };
    const observations = step.observations.map((observation, index): Item => {
      const isCut = layout.plan.cut[position]![index]!;
      const observationCounts = counts.steps[position]!.observations[index]!;
      return {
        tokens: Math.max(0, (isCut ? observationCounts.cut! : observationCounts.full) - counts.observationWrapper),
        chars: isCut ? observation.cutText!.length : observation.raw.length,
        raw: observation.raw,
        apply: (text) => layout.observations.set(`${position}:${index}`, text),
      };
    });
    return [action, ...observations];
  });
  const issueItem: Item = {
    tokens: prefix.tokens - counts.instanceWrapper,
    chars: prefix.issue.length,
    raw: document.problemStatement,
    apply: (text) => (layout.prefix = { ...prefix, instance: document.render.instance(text), issue: text, cut: true }),
  };
  const stepCount = document.steps.length;
  const dropAll: StepPlan = { ...layout.plan, dropped: stepCount > 0 ? { start: 0, end: stepCount } : null, tokens: fixed + (stepCount > 0 ? counts.stepsMarker : 0) };
  const rounds: Array<[StepPlan, Item[]]> = [
    [layout.plan, [patchItem, ...stepItems]],
    [dropAll, [patchItem]],
    [dropAll, [patchItem, issueItem]],
  ];
  for (const [plan, items] of rounds) {
    const overhead = plan.tokens - items.reduce((sum, item) => sum + item.tokens, 0);
    const cap = waterFill(items.map((item) => item.tokens), budget - overhead, counts.textMarker);
    if (cap === undefined) continue;
    layout.plan = plan;
    for (const item of items) {
      if (item.tokens <= cap + counts.textMarker) continue;
      const text = shrink(item.raw, item.chars, item.tokens, cap);
      if (text !== item.raw) item.apply(text);
    }
    return layout;
  }
  throw wnwError('WNW_ERR_CFG_INVALID', `budgetTokens ${budget} is too small for template text alone (${counts.system + counts.instanceWrapper + counts.question} tokens)`, {
    details: { field: 'budgetTokens', budgetTokens: budget },
  });
}

function isDropped(plan: StepPlan, position: number): boolean {
  return plan.dropped !== null && position >= plan.dropped.start && position < plan.dropped.end;
}

function assemble(document: SerializationDocument, layout: Layout): { text: string; prefixChars: number } {
  const { render } = document;
  const { plan } = layout;
  const parts = [document.system, layout.prefix.instance];
  const prefixChars = document.system.length + layout.prefix.instance.length;
  parts.push(document.noSteps);
  document.steps.forEach((step, position) => {
    if (plan.dropped !== null && position === plan.dropped.start) {
      const first = document.steps[plan.dropped.start]!.step.index;
      const last = document.steps[plan.dropped.end - 1]!.step.index;
      parts.push(render.stepsMarker(plan.dropped.end - plan.dropped.start, first, last));
    }
    if (isDropped(plan, position)) return;
    const elided = plan.elided[position]!;
    const action = layout.actions.get(position);
    if (action === undefined) parts.push(elided ? step.elided : step.full);
    else parts.push(render.step(step.step, elided ? render.thoughtMarker(step.step.thought) : step.step.thought, action));
    step.observations.forEach((observation, index) => {
      const override = layout.observations.get(`${position}:${index}`);
      if (override !== undefined) parts.push(render.observation(step.step.index, override));
      else parts.push(plan.cut[position]![index] ? observation.cut! : observation.full);
    });
  });
  parts.push(layout.patch === undefined ? document.patch : render.patch(layout.patch));
  parts.push(document.question);
  return { text: parts.join(''), prefixChars };
}

function result(
  template: string,
  { text, prefixChars }: { text: string; prefixChars: number },
  final: FinalCount,
  estimated: boolean,
  tokensBefore: number,
  layout: Layout,
): Serialized {
  const { plan } = layout;
  const kept = (position: number): boolean => !isDropped(plan, position);
  const thoughts = plan.elided.filter((elided, position) => elided && kept(position)).length;
  const observations = plan.cut.reduce(
    (sum, cuts, position) => (kept(position) ? sum + cuts.filter((isCut, index) => isCut || layout.observations.has(`${position}:${index}`)).length : sum),
    0,
  );
  const stepsDropped = plan.dropped === null ? 0 : plan.dropped.end - plan.dropped.start;
  const cutDetail = { issue: layout.prefix.cut, actions: layout.actions.size };
  const truncated = thoughts > 0 || observations > 0 || stepsDropped > 0 || layout.patch !== undefined || cutDetail.issue || cutDetail.actions > 0;
  return {
    template,
    text,
    ...(final.ids === undefined ? {} : { inputIds: final.ids }),
    inputTokens: final.tokens,
    estimated,
    truncated,
    cut: {
      thoughts,
      observations,
      steps_dropped: stepsDropped,
      patch: layout.patch !== undefined,
      tokens_before: truncated ? tokensBefore : final.tokens,
    },
    cutDetail,
    prefixChars,
  };
}
