/**
 * Serializes a candidate for a value model under a token budget. Every piece is counted in one
 * batched call (counts only); the cuts are chosen by arithmetic on those counts (fit-budget.ts); the final
 * text is encoded, so `inputIds` and `inputTokens` are exact. When joins between pieces
 * tokenize differently and the final count exceeds the budget, the plan is tightened and redone
 * (at most MAX_ATTEMPTS encodes of the final text), then pieces are cut further on exact counts of
 * the whole text (cut-to-fit.ts) until it fits. Only a budget too small for the template text,
 * with everything cut, is an error.
 */
import { throwIfAborted, wnwError } from '../errors.js';
import type { Task } from '../types/task.js';
import type { Trajectory } from '../types/trajectory.js';
import {
  countDocument,
  estimateCounter,
  tokenizerCounter,
  type DocumentCounts,
  type FinalCount,
  type TokenCounter,
} from './count-document.js';
import { cutToFit, type CutPiece, type Measured } from './cut-to-fit.js';
import { fitSteps, waterFill, type StepPlan } from './fit-budget.js';
import { headTail, type Elided } from './head-tail.js';
import { assemble, isDropped, uncutLayout, type Layout, type Prefix } from './layout.js';
import { buildDocument, type SerializationDocument } from './serialize-document.js';
import { loadTemplate } from './template-registry.js';
import { serializeChat } from './serialize-chat.js';
import { ChatTemplateSettings, isChatTemplate, TemplateSettings } from './template-schema.js';
import type { Serialized, SerializeOptions } from './types.js';

const MAX_ATTEMPTS = 3;
/**
 * Pieces up to this many characters are always counted whole: on those the plan's arithmetic is
 * exact, and only a piece far over any budget (a generated file in the patch, a log dumped into an
 * output) is counted on a sample.
 */
export const EXACT_CHARS = 65_536;
/**
 * A text is encoded whole first when its characters, at the template's `chars_per_token`, come to
 * at most this many times the budget: real text runs at more characters a token than the
 * templates' conservative 3.5 (a 4K-token trajectory: 4.9 with the bundled tokenizer), and one
 * encode of a text that fits is the whole cost of fitting it; one that does not fit pays that one
 * encode on top of counting its pieces.
 */
const MAY_FIT = 1.6;

export async function serializeTrajectory(task: Task, trajectory: Trajectory, options: SerializeOptions): Promise<Serialized> {
  const budget = options.budgetTokens;
  if (!Number.isInteger(budget) || budget <= 0) {
    throw wnwError('WNW_ERR_CFG_INVALID', `budgetTokens must be a positive integer, got ${budget}`, { details: { field: 'budgetTokens' } });
  }
  throwIfAborted(options.signal);
  const loaded = loadTemplate(options.template, { dirs: options.templateDirs });
  if (isChatTemplate(loaded))
    return serializeChat(task, trajectory, loaded, resolveSettings(ChatTemplateSettings, loaded.defaults, options.settings), options);
  const template = loaded;
  const settings = resolveSettings(TemplateSettings, template.defaults, options.settings);
  const document = buildDocument(task, trajectory, template, settings);
  // No piece is tokenized far past what the budget can hold (twice its characters at
  // `chars_per_token`); below EXACT_CHARS every piece is counted whole, as it always was.
  const boundChars = Math.max(EXACT_CHARS, Math.ceil(2 * budget * settings.chars_per_token));
  const counter = options.tokenizer
    ? tokenizerCounter(options.tokenizer, { budget, chars: boundChars })
    : estimateCounter(settings.chars_per_token);
  const issueCap = Math.floor(settings.issue_max_share * budget);
  const uncut = uncutLayout(document);
  const uncutText = assemble(document, uncut);
  const estimate = uncutText.text.length / settings.chars_per_token;
  // The uncut text's exact count, once it has been encoded.
  let whole: FinalCount | undefined;
  if (estimate <= (counter.estimated ? budget : budget * MAY_FIT)) {
    // May fit uncut: one encode of the assembled text (and of the issue, for its cap) before any
    // piece. When it fits, that is all the tokenizer does for this candidate. (Estimated, the
    // whole text fits by its estimate here, and the pieces' sum could not have said otherwise.)
    const quick = await counter.count([document.instance, document.render.instance('')], uncutText.text);
    throwIfAborted(options.signal);
    whole = quick.whole!;
    if (whole.tokens <= budget && quick.tokens[0]! - quick.tokens[1]! <= issueCap) {
      return result(template.name, uncutText, whole, counter.estimated, whole.tokens, uncut);
    }
  }
  const counts = await countDocument(document, counter);
  throwIfAborted(options.signal);
  // `tokens_before` is the exact count for a text estimated to fit, else the pieces' sum, as it
  // was before texts estimated over the budget were encoded whole first (the same output).
  if (whole !== undefined && !counter.estimated && estimate <= budget) counts.tokensBefore = whole.tokens;

  const headShare = settings.observation_head_chars / Math.max(1, settings.observation_head_chars + settings.observation_tail_chars);
  const keep = (raw: string, keepChars: number) => cutText(document, raw, keepChars, headShare);
  // Planned cuts keep the characters of a piece in proportion to the tokens they may take.
  const shrink = (raw: string, chars: number, tokens: number, keepTokens: number): string =>
    keep(raw, Math.floor((keepTokens * chars) / Math.max(1, tokens))) ?? raw;

  const prefix = await fitIssue(document, counts, issueCap, shrink, counter);
  throwIfAborted(options.signal);
  // Pieces count a little more apart than joined: when their sum is that close, try the whole text.
  const joins = 6 + document.steps.reduce((sum, step) => sum + 1 + step.observations.length, 0);
  if (!prefix.cut && whole === undefined && !counts.sampled && counts.tokensBefore <= budget + joins) {
    const final = await counter.countFinal(uncutText.text);
    throwIfAborted(options.signal);
    if (final.tokens <= budget) return result(template.name, uncutText, final, counter.estimated, final.tokens, uncut);
  }
  const measure = async (layout: Layout): Promise<Measured> => {
    const assembled = assemble(document, layout);
    const final = await counter.countFinal(assembled.text);
    throwIfAborted(options.signal);
    return { ...assembled, final };
  };
  const done = (measured: Measured, layout: Layout) =>
    result(template.name, measured, measured.final, counter.estimated, counts.tokensBefore, layout);
  let effective = budget;
  let planned: Layout | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const layout = planLayout(document, counts, prefix, effective, settings, shrink);
    if (layout === undefined) break;
    const measured = await measure(layout);
    if (measured.final.tokens <= budget) return done(measured, layout);
    planned = layout;
    effective -= (measured.final.tokens - budget) * attempt;
  }
  // Still over, or no plan fits by the counts: cut on exact counts of the whole text, from the
  // last plan, else from the smallest layout (every step dropped; issue and patch left to cut).
  const cutFrom = (layout: Layout) =>
    cutToFit(cutPieces(document, layout), { budget, keep, probeChars: boundChars, measure: () => measure(layout) });
  if (planned !== undefined) {
    const fitted = await cutFrom(planned);
    if (fitted.fits) return done(fitted.measured, planned);
  }
  const smallest = smallestLayout(document, prefix);
  const fitted = await cutFrom(smallest);
  if (fitted.fits) return done(fitted.measured, smallest);
  // Over with every piece of the smallest layout cut: that last measurement is the template text alone.
  const { final } = fitted.measured;
  throw wnwError(
    'WNW_ERR_CFG_INVALID',
    `budgetTokens ${budget} is too small for template text alone (${final.tokens} tokens with everything cut)`,
    {
      details: { field: 'budgetTokens', budgetTokens: budget, tokens: final.tokens },
    },
  );
}

/** `raw` with about `keepChars` characters kept as head + marker + tail (undefined: no shorter that way). */
function cutText(document: SerializationDocument, raw: string, keepChars: number, headShare: number): string | undefined {
  const head = Math.round(keepChars * headShare);
  return headTail(raw, head, keepChars - head, (elided: Elided) => document.render.textMarker(elided));
}

/** Every step dropped; issue and patch as planned, for `cutToFit` to cut further. */
function smallestLayout(document: SerializationDocument, prefix: Prefix): Layout {
  const layout = uncutLayout(document);
  const steps = document.steps.length;
  return { ...layout, prefix, plan: { ...layout.plan, dropped: steps > 0 ? { start: 0, end: steps } : null } };
}

/** What `cutToFit` may cut in `layout`: the patch, the kept steps' actions and outputs, and the issue (shared, so last). */
function cutPieces(document: SerializationDocument, layout: Layout): CutPiece[] {
  const planned = layout.prefix;
  const patch = document.patchText;
  const pieces: CutPiece[] = [{ raw: patch, set: (text) => (layout.patch = text === patch ? undefined : text) }];
  document.steps.forEach((step, position) => {
    if (isDropped(layout.plan, position)) return;
    const action = step.step.action;
    pieces.push({
      raw: action,
      set: (text) => void (text === action ? layout.actions.delete(position) : layout.actions.set(position, text)),
    });
    step.observations.forEach((observation, index) => {
      const key = `${position}:${index}`;
      pieces.push({
        raw: observation.raw,
        set: (text) => {
          layout.plan.cut[position]![index] = false;
          if (text === observation.raw) layout.observations.delete(key);
          else layout.observations.set(key, text);
        },
      });
    });
  });
  const issue = document.problemStatement;
  pieces.push({
    raw: issue,
    shared: true,
    set: (text) => {
      layout.prefix =
        text === issue
          ? { ...planned, instance: document.instance, issue, cut: false }
          : { ...planned, instance: document.render.instance(text), issue: text, cut: true };
    },
  });
  return pieces;
}

function resolveSettings<T extends object>(
  schema: typeof TemplateSettings | typeof ChatTemplateSettings,
  defaults: T,
  overrides: object | undefined,
): T {
  if (overrides === undefined) return defaults;
  const parsed = schema.partial().safeParse(overrides);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['settings', ...issue.path].join('.');
    throw wnwError('WNW_ERR_CFG_INVALID', `${field}: ${issue.message}`, { details: { field } });
  }
  return { ...defaults, ...parsed.data } as T;
}

type Shrink = (raw: string, chars: number, tokens: number, keepTokens: number) => string;

/**
 * Caps the issue at `cap` tokens; depends on the task and budget only, so the prefix is shared.
 * The cut is counted exactly and redone smaller while it is over (a head + tail kept by its share
 * of the characters can hold more than its share of the tokens), so the plan starts from the
 * prefix's real size.
 */
async function fitIssue(
  document: SerializationDocument,
  counts: DocumentCounts,
  cap: number,
  shrink: Shrink,
  counter: TokenCounter,
): Promise<Prefix> {
  const issueTokens = counts.instance - counts.instanceWrapper;
  const issue = document.problemStatement;
  if (issueTokens <= cap) return { instance: document.instance, issue, tokens: counts.instance, cut: false };
  const limit = counts.instanceWrapper + cap;
  let keep = Math.max(0, cap - counts.textMarker);
  for (let attempt = 1; ; attempt += 1) {
    const cut = shrink(issue, issue.length, issueTokens, keep);
    const instance = document.render.instance(cut);
    const tokens = (await counter.count([instance])).tokens[0]!;
    if (tokens <= limit || keep === 0 || attempt === MAX_ATTEMPTS) return { instance, issue: cut, tokens, cut: cut !== issue };
    keep = Math.max(0, keep - (tokens - limit));
  }
}

interface Item {
  tokens: number;
  chars: number;
  raw: string;
  apply(text: string): void;
}

/** The cuts the counts say fit `budget`; undefined when even the smallest layout does not fit by the counts. */
function planLayout(
  document: SerializationDocument,
  counts: DocumentCounts,
  prefix: Prefix,
  budget: number,
  settings: TemplateSettings,
  shrink: Shrink,
): Layout | undefined {
  const fixed = counts.system + prefix.tokens + counts.question + counts.patch + counts.noSteps;
  const input = {
    fixed,
    steps: counts.steps,
    stepsMarker: counts.stepsMarker,
    keepFirst: settings.keep_first_steps,
    keepLast: settings.keep_last_steps,
  };
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
  const dropAll: StepPlan = {
    ...layout.plan,
    dropped: stepCount > 0 ? { start: 0, end: stepCount } : null,
    tokens: fixed + (stepCount > 0 ? counts.stepsMarker : 0),
  };
  const rounds: Array<[StepPlan, Item[]]> = [
    [layout.plan, [patchItem, ...stepItems]],
    [dropAll, [patchItem]],
    [dropAll, [patchItem, issueItem]],
  ];
  for (const [plan, items] of rounds) {
    const overhead = plan.tokens - items.reduce((sum, item) => sum + item.tokens, 0);
    const cap = waterFill(
      items.map((item) => item.tokens),
      budget - overhead,
      counts.textMarker,
    );
    if (cap === undefined) continue;
    layout.plan = plan;
    for (const item of items) {
      if (item.tokens <= cap + counts.textMarker) continue;
      const text = shrink(item.raw, item.chars, item.tokens, cap);
      if (text !== item.raw) item.apply(text);
    }
    return layout;
  }
  return undefined;
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
    (sum, cuts, position) =>
      kept(position) ? sum + cuts.filter((isCut, index) => isCut || layout.observations.has(`${position}:${index}`)).length : sum,
    0,
  );
  const stepsDropped = plan.dropped === null ? 0 : plan.dropped.end - plan.dropped.start;
  const cutDetail = { issue: layout.prefix.cut, actions: layout.actions.size };
  const truncated =
    thoughts > 0 || observations > 0 || stepsDropped > 0 || layout.patch !== undefined || cutDetail.issue || cutDetail.actions > 0;
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
