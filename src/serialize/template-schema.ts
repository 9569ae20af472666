/**
 * The shape of a serialization template file (`templates/<name>.yaml`) and the placeholders each
 * field may use. Every limit lives in the file's `defaults`; nothing here supplies a value.
 */
import { z } from 'zod';

/** Per-field sizes and switches; a template's `defaults`, overridable per call. */
export const TemplateSettings = z
  .object({
    /** Characters kept from the start of a long observation when it is cut. */
    observation_head_chars: z.number().int().nonnegative(),
    /** Characters kept from the end of a long observation when it is cut. */
    observation_tail_chars: z.number().int().nonnegative(),
    /** Steps at the start that are never dropped. */
    keep_first_steps: z.number().int().nonnegative(),
    /** Steps at the end that are never dropped. */
    keep_last_steps: z.number().int().nonnegative(),
    /** Largest share of the budget the issue may take; larger issues are cut the same way for every candidate. */
    issue_max_share: z.number().gt(0).max(1),
    /** Put the message's `reasoning` before its content in the thought. */
    include_reasoning: z.boolean(),
    /** Without tool calls, take the last fenced code block of the content as the action. */
    split_fenced_action: z.boolean(),
    /** Characters per token when no tokenizer is given (the count is then an estimate). */
    chars_per_token: z.number().positive(),
  })
  .strict();
export type TemplateSettings = z.infer<typeof TemplateSettings>;

const text = z.string();

export const TemplateFile = z
  .object({
    /** `<family>-v<version>`, equal to the file name without `.yaml`. */
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*-v\d+$/),
    version: z.number().int().positive(),
    description: z.string().optional(),
    /** `trajectory`: steps are rendered; `patch`: only issue, patch and question. */
    layout: z.enum(['trajectory', 'patch']),
    system: text,
    instance: text,
    step: text.optional(),
    observation: text.optional(),
    tool_call: text.optional(),
    tool_parameter: text.optional(),
    patch: text,
    question: text,
    markers: z
      .object({
        observation: text.optional(),
        thought: text.optional(),
        steps: text.optional(),
        /** Head/tail elision of any other text (issue, patch, action) as a last resort. */
        text,
      })
      .strict(),
    placeholders: z
      .object({
        no_steps: text.optional(),
        thought: text.optional(),
        action: text.optional(),
        observation: text.optional(),
        patch: text,
      })
      .strict(),
    defaults: TemplateSettings,
  })
  .strict()
  .superRefine((file, context) => {
    if (file.name !== `${file.name.replace(/-v\d+$/, '')}-v${file.version}`) {
      context.addIssue({ code: 'custom', path: ['version'], message: `name ${file.name} does not end in -v${file.version}` });
    }
    if (file.layout !== 'trajectory') return;
    const required: Array<[string[], string | undefined]> = [
      [['step'], file.step],
      [['observation'], file.observation],
      [['tool_call'], file.tool_call],
      [['tool_parameter'], file.tool_parameter],
      [['markers', 'observation'], file.markers.observation],
      [['markers', 'thought'], file.markers.thought],
      [['markers', 'steps'], file.markers.steps],
      [['placeholders', 'no_steps'], file.placeholders.no_steps],
      [['placeholders', 'thought'], file.placeholders.thought],
      [['placeholders', 'action'], file.placeholders.action],
      [['placeholders', 'observation'], file.placeholders.observation],
    ];
    for (const [path, value] of required) {
      if (value === undefined) context.addIssue({ code: 'custom', path, message: 'required by layout trajectory' });
    }
  });
export type TemplateFile = z.infer<typeof TemplateFile>;

/** Budget settings of a `chat` layout (the conversation rendered through the model's own chat template). */
export const ChatTemplateSettings = z
  .object({
    /** Characters kept from the start of a long tool output when it is cut. */
    observation_head_chars: z.number().int().nonnegative(),
    /** Characters kept from the end of a long tool output when it is cut. */
    observation_tail_chars: z.number().int().nonnegative(),
    /** Assistant turns at the end that are never dropped (the end of the trajectory is what a critic judges). */
    keep_last_turns: z.number().int().nonnegative(),
    /** Largest share of the budget the issue (the first user message) may take. */
    issue_max_share: z.number().gt(0).max(1),
    /** Characters per token when no tokenizer is given (the count is then an estimate). */
    chars_per_token: z.number().positive(),
  })
  .strict();
export type ChatTemplateSettings = z.infer<typeof ChatTemplateSettings>;

/**
 * A template of layout `chat`: the trajectory as a conversation (system prompt with the tool
 * definitions, then every message as role + text) rendered through the model's own Jinja chat
 * template, which the scorer supplies (`scorer.chatTemplate`, or the tokenizer folder's).
 */
export const ChatTemplateFile = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*-v\d+$/),
    version: z.number().int().positive(),
    description: z.string().optional(),
    layout: z.literal('chat'),
    chat: z
      .object({
        /** `drop`: assistant turns carry their text only (the OpenHands SDK's critic input); `keep`: their tool calls too. */
        tool_calls: z.enum(['drop', 'keep']),
        /** Passed to the chat template; a classifier reads the last token of the conversation, so usually false. */
        add_generation_prompt: z.boolean(),
      })
      .strict(),
    markers: z.object({ text }).strict(),
    /**
     * The classification head this input was made for: a label table known by name and the output
     * read as success. A scorer given this template and no `labels` reads its outputs so.
     */
    head: z
      .object({ labels: z.string().min(1), label_index: z.number().int().nonnegative() })
      .strict()
      .optional(),
    defaults: ChatTemplateSettings,
  })
  .strict()
  .superRefine((file, context) => {
    if (file.name !== `${file.name.replace(/-v\d+$/, '')}-v${file.version}`) {
      context.addIssue({ code: 'custom', path: ['version'], message: `name ${file.name} does not end in -v${file.version}` });
    }
  });
export type ChatTemplateFile = z.infer<typeof ChatTemplateFile>;

/** Any template file, told apart by `layout`. */
export type AnyTemplateFile = TemplateFile | ChatTemplateFile;

export function isChatTemplate(template: AnyTemplateFile): template is ChatTemplateFile {
  return template.layout === 'chat';
}

const COMMON = ['instance_id', 'repo'];

/** Placeholders each field may use; any other one is an error when the template loads. */
export const FIELD_VARIABLES: Record<string, readonly string[]> = {
  system: COMMON,
  instance: [...COMMON, 'problem_statement'],
  step: [...COMMON, 'index', 'thought', 'action'],
  observation: [...COMMON, 'index', 'observation'],
  tool_call: ['name', 'parameters'],
  tool_parameter: ['key', 'value'],
  patch: [...COMMON, 'patch'],
  question: COMMON,
  'markers.observation': ['chars', 'lines'],
  'markers.thought': ['chars', 'lines'],
  'markers.steps': ['count', 'first', 'last'],
  'markers.text': ['chars', 'lines'],
  'placeholders.no_steps': COMMON,
  'placeholders.thought': [],
  'placeholders.action': [],
  'placeholders.observation': [],
  'placeholders.patch': [],
};
