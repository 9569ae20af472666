/**
 * Serialization of layout `chat`: the trajectory as a conversation (critic-conversation.ts)
 * rendered through the model's own chat template (chat-template.ts), under a token budget. What is
 * kept, in order of value: the system prompt with the tools (never cut), the issue (the first user
 * message, capped at `issue_max_share` of the budget), and the end of the trajectory. Cuts, each
 * only while still over the budget: long tool outputs to head + tail (longest first), then whole
 * turns from the start of the trajectory (an assistant message with the outputs that answer it,
 * keeping the last `keep_last_turns`), then pieces cut further on exact counts (cut-to-fit.ts).
 * Dropped turns leave no message behind: a marker message would be a turn the model never saw in
 * training, and would move the chat template's notion of the last user query.
 */
import { throwIfAborted, wnwError } from '../errors.js';
import { commonPrefixLength } from '../util/common-prefix.js';
import type { Task } from '../types/task.js';
import type { Trajectory } from '../types/trajectory.js';
import { compileChatTemplate } from './chat-template.js';
import { estimateCounter, tokenizerCounter, type FinalCount } from './count-document.js';
import { criticConversation, type CriticConversation, type CriticMessage } from './critic-conversation.js';
import { cutToFit, type CutPiece, type Measured } from './cut-to-fit.js';
import { headTail, type Elided } from './head-tail.js';
import { renderField } from './render.js';
import type { ChatTemplateFile, ChatTemplateSettings } from './template-schema.js';
import type { Serialized, SerializeOptions } from './types.js';

const MAX_ATTEMPTS = 3;

interface ChatLayout {
  /** Current text of each message (cut or not). */
  contents: string[];
  /** Messages left out. */
  dropped: Set<number>;
}

export async function serializeChat(
  task: Task,
  trajectory: Trajectory,
  template: ChatTemplateFile,
  settings: ChatTemplateSettings,
  options: SerializeOptions,
): Promise<Serialized> {
  const budget = options.budgetTokens;
  if (options.chatTemplate === undefined) {
    throw wnwError(
      'WNW_ERR_SCORE_TEMPLATE',
      `template ${template.name} renders through the model's own chat template: give the scorer one (scorer.chatTemplate or --chat-template: a tokenizer_config.json or chat_template.jinja), or a tokenizer folder that holds one`,
      { details: { template: template.name, field: 'scorer.chatTemplate' } },
    );
  }
  const chat = compileChatTemplate(options.chatTemplate);
  const conversation = criticConversation(task, trajectory, { toolCalls: template.chat.tool_calls });
  const counter = options.tokenizer ? tokenizerCounter(options.tokenizer) : estimateCounter(settings.chars_per_token);
  const { messages, issueIndex } = conversation;
  const marker = (elided: Elided) =>
    renderField(template.markers.text, { chars: elided.chars, lines: elided.lines }, `${template.name}.markers.text`);
  const headShare = settings.observation_head_chars / Math.max(1, settings.observation_head_chars + settings.observation_tail_chars);
  const keep = (raw: string, keepChars: number): string | undefined => {
    const head = Math.round(keepChars * headShare);
    return headTail(raw, head, keepChars - head, marker);
  };
  const render = (layout: ChatLayout): string =>
    chat.render({
      messages: messages.flatMap((message, index): CriticMessage[] =>
        layout.dropped.has(index) ? [] : [{ ...message, content: layout.contents[index]! }],
      ),
      // The SDK passes `tools` only when there are some; the template then takes its no-tools branch.
      ...(conversation.tools.length > 0 ? { tools: conversation.tools } : {}),
      add_generation_prompt: template.chat.add_generation_prompt,
    });
  const prefix = chat.render({
    messages: messages.slice(0, issueIndex + 1),
    ...(conversation.tools.length > 0 ? { tools: conversation.tools } : {}),
    add_generation_prompt: false,
  });
  const measure = async (layout: ChatLayout): Promise<Measured> => {
    const text = render(layout);
    const final = await counter.countFinal(text);
    throwIfAborted(options.signal);
    return { text, prefixChars: commonPrefixLength(prefix, text), final };
  };
  const done = (measured: Measured, layout: ChatLayout, tokensBefore: number) =>
    result(template.name, measured, counter.estimated, tokensBefore, layout, conversation);

  const whole: ChatLayout = { contents: messages.map((message) => message.content), dropped: new Set() };
  // One call: the whole text encoded, and the issue counted for its cap. Each message is counted
  // only when something has to be cut.
  const wholeText = render(whole);
  const first = await counter.count([messages[issueIndex]!.content], wholeText);
  throwIfAborted(options.signal);
  const full: Measured = { text: wholeText, prefixChars: commonPrefixLength(prefix, wholeText), final: first.whole! };
  const issueCap = Math.floor(settings.issue_max_share * budget);
  const issueTokens = first.tokens[0] ?? 0;
  if (full.final.tokens <= budget && issueTokens <= issueCap) return done(full, whole, full.final.tokens);
  const contentTokens = (await counter.count(messages.map((message) => message.content))).tokens;
  throwIfAborted(options.signal);

  // Planned cuts on counts: the template's own tokens stay what they were, content shrinks by its count.
  const overheadPerMessage = Math.max(
    0,
    (full.final.tokens - contentTokens.reduce((sum, tokens) => sum + tokens, 0)) / Math.max(1, messages.length),
  );
  const turns = turnsOf(conversation);
  let effective = budget;
  let planned: ChatLayout | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const layout = plan({
      conversation,
      contentTokens,
      issueTokens,
      issueCap,
      turns,
      overheadPerMessage,
      total: full.final.tokens,
      budget: effective,
      settings,
      keep,
    });
    const measured = await measure(layout);
    if (measured.final.tokens <= budget) return done(measured, layout, full.final.tokens);
    planned = layout;
    effective -= (measured.final.tokens - budget) * attempt;
  }
  // Still over: cut the kept messages further on exact counts, the issue last (it is shared).
  const layout = planned!;
  const pieces: CutPiece[] = messages.flatMap((message, index): CutPiece[] => {
    if (layout.dropped.has(index) || index < issueIndex || message.content === '') return [];
    const raw = message.content;
    return [{ raw, shared: index === issueIndex, set: (text) => void (layout.contents[index] = text) }];
  });
  const fitted = await cutToFit(pieces, { budget, keep, measure: () => measure(layout) });
  if (fitted.fits) return done(fitted.measured, layout, full.final.tokens);
  throw wnwError(
    'WNW_ERR_CFG_INVALID',
    `budgetTokens ${budget} is too small for the system prompt and tools alone (${fitted.measured.final.tokens} tokens with everything else cut)`,
    {
      details: { field: 'budgetTokens', budgetTokens: budget, tokens: fitted.measured.final.tokens },
    },
  );
}

/** Message indexes of each turn after the issue: an assistant message and what follows it up to the next one. */
function turnsOf(conversation: CriticConversation): number[][] {
  const turns: number[][] = [];
  conversation.messages.forEach((message, index) => {
    if (index <= conversation.issueIndex) return;
    if (message.role === 'assistant' || turns.length === 0) turns.push([index]);
    else turns.at(-1)!.push(index);
  });
  return turns;
}

interface PlanInput {
  conversation: CriticConversation;
  contentTokens: number[];
  issueTokens: number;
  issueCap: number;
  turns: number[][];
  overheadPerMessage: number;
  total: number;
  budget: number;
  settings: ChatTemplateSettings;
  keep: (raw: string, keepChars: number) => string | undefined;
}

/** The cuts the counts say fit `budget`: issue cap, long outputs to head + tail, then the oldest turns dropped. */
function plan(input: PlanInput): ChatLayout {
  const { conversation, contentTokens, settings, keep } = input;
  const { messages, issueIndex } = conversation;
  const layout: ChatLayout = { contents: messages.map((message) => message.content), dropped: new Set() };
  const tokens = [...contentTokens];
  let estimate = input.total;
  const cutTo = (index: number, text: string) => {
    const before = tokens[index]!;
    const after = Math.ceil((before * text.length) / Math.max(1, messages[index]!.content.length));
    layout.contents[index] = text;
    tokens[index] = after;
    estimate -= before - after;
  };

  if (input.issueTokens > input.issueCap) {
    const raw = messages[issueIndex]!.content;
    const cut = keep(raw, Math.floor((input.issueCap * raw.length) / Math.max(1, input.issueTokens)));
    if (cut !== undefined) cutTo(issueIndex, cut);
  }
  const outputChars = settings.observation_head_chars + settings.observation_tail_chars;
  const outputs = messages
    .map((message, index) => ({ message, index }))
    .filter(({ message, index }) => index > issueIndex && message.role !== 'assistant' && message.content.length > outputChars)
    .sort((a, b) => tokens[b.index]! - tokens[a.index]! || a.index - b.index);
  for (const { index } of outputs) {
    if (estimate <= input.budget) break;
    const cut = keep(messages[index]!.content, outputChars);
    if (cut !== undefined) cutTo(index, cut);
  }
  const droppable = Math.max(0, input.turns.length - settings.keep_last_turns);
  for (const turn of input.turns.slice(0, droppable)) {
    if (estimate <= input.budget) break;
    for (const index of turn) {
      layout.dropped.add(index);
      estimate -= tokens[index]! + input.overheadPerMessage;
    }
  }
  return layout;
}

function result(
  template: string,
  measured: Measured,
  estimated: boolean,
  tokensBefore: number,
  layout: ChatLayout,
  conversation: CriticConversation,
): Serialized {
  const { messages, issueIndex } = conversation;
  const kept = (index: number) => !layout.dropped.has(index);
  const changed = (index: number) => kept(index) && layout.contents[index] !== messages[index]!.content;
  const thoughts = messages.filter((message, index) => index > issueIndex && message.role === 'assistant' && changed(index)).length;
  const observations = messages.filter((message, index) => index > issueIndex && message.role !== 'assistant' && changed(index)).length;
  const stepsDropped = messages.filter((message, index) => message.role === 'assistant' && !kept(index)).length;
  const messagesDropped = layout.dropped.size;
  const issue = changed(issueIndex);
  const truncated = thoughts > 0 || observations > 0 || messagesDropped > 0 || issue;
  const final: FinalCount = measured.final;
  return {
    template,
    text: measured.text,
    ...(final.ids === undefined ? {} : { inputIds: final.ids }),
    inputTokens: final.tokens,
    estimated,
    truncated,
    cut: { thoughts, observations, steps_dropped: stepsDropped, patch: false, tokens_before: truncated ? tokensBefore : final.tokens },
    cutDetail: { issue, actions: 0 },
    prefixChars: measured.prefixChars,
  };
}
