/**
 * A model's own chat template (Jinja), read from local files and rendered with @huggingface/jinja
 * configured as the OpenHands SDK configures Python Jinja2 for its critic (`chat_template.py` at
 * 611629e; docs/design/07-openhands-critic.md#3): `trim_blocks` and `lstrip_blocks` on, and `tojson` =
 * `json.dumps(x, ensure_ascii=False, sort_keys=False)` (keys in the input's order, `&`, `'`, `<`,
 * `>` and non-ASCII written as they are; `python-json.ts`), not plain Jinja2's sorted, escaped
 * `tojson`. So the bytes match what the critic was trained on. Templates are never downloaded: a
 * tokenizer_config.json, a chat_template.jinja, or a folder holding one, named by the scorer
 * config or beside the tokenizer.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Environment, Interpreter, parse, tokenize } from '@huggingface/jinja';
import { wnwError } from '../errors.js';
import { PythonFloat, pythonJsonDumps, type JsonDumpsOptions, type PythonJsonValue } from './python-json.js';

/** Files a model folder may keep its chat template in, in the order they are tried. */
export const CHAT_TEMPLATE_FILES = ['chat_template.jinja', 'tokenizer_config.json'] as const;

function templateFromTokenizerConfig(file: string): string {
  let config: { chat_template?: unknown };
  try {
    config = JSON.parse(readFileSync(file, 'utf8')) as { chat_template?: unknown };
  } catch (error) {
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${file}: not JSON: ${(error as Error).message}`, { cause: error, details: { file } });
  }
  return templateOfConfig(config, file);
}

/** The `chat_template` of a parsed tokenizer_config.json (`file` names it in errors). */
function templateOfConfig(config: { chat_template?: unknown }, file: string): string {
  const template = config.chat_template;
  if (typeof template === 'string') return template;
  // Some tokenizers keep several named templates; `default` is what apply_chat_template uses.
  if (Array.isArray(template)) {
    const named = template.find(
      (entry): entry is { name: string; template: string } => typeof entry?.template === 'string' && entry?.name === 'default',
    );
    if (named) return named.template;
  }
  throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${file} has no chat_template string`, { details: { file, field: 'chat_template' } });
}

/** The chat template at `path`: a tokenizer_config.json, a .jinja file, or a folder holding either. */
export function loadChatTemplate(path: string): string {
  if (!existsSync(path)) {
    throw wnwError(
      'WNW_ERR_SCORE_TEMPLATE',
      `chat template not found at ${path} (a tokenizer_config.json, a chat_template.jinja, or their folder)`,
      {
        details: { path, field: 'scorer.chatTemplate' },
      },
    );
  }
  if (statSync(path).isDirectory()) {
    const found = findChatTemplate(path);
    if (found === undefined) {
      throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${path} holds neither ${CHAT_TEMPLATE_FILES.join(' nor ')}`, {
        details: { path, field: 'scorer.chatTemplate' },
      });
    }
    return found;
  }
  return path.endsWith('.json') ? templateFromTokenizerConfig(path) : readFileSync(path, 'utf8');
}

/**
 * The chat template of the model folder holding `path` (a folder, or tokenizer.json inside one), or
 * undefined when it keeps none; a tokenizer_config.json without a template counts as none.
 */
export function findChatTemplate(path: string | undefined): string | undefined {
  if (path === undefined || !existsSync(path)) return undefined;
  const folder = statSync(path).isDirectory() ? path : join(path, '..');
  for (const name of CHAT_TEMPLATE_FILES) {
    const file = join(folder, name);
    if (!existsSync(file)) continue;
    if (name.endsWith('.jinja')) return readFileSync(file, 'utf8');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { chat_template?: unknown };
    if (config.chat_template !== undefined) return templateOfConfig(config, file);
  }
  return undefined;
}

/** A runtime value of @huggingface/jinja, as far as `tojson` needs to see it. */
interface RuntimeValue {
  type: string;
  value: unknown;
}

/** Runtime value → plain data, keeping Python's int/float distinction. */
function toPython(value: RuntimeValue): PythonJsonValue {
  switch (value.type) {
    case 'ObjectValue':
    case 'NamespaceValue':
    case 'KeywordArgumentsValue':
      return Object.fromEntries([...(value.value as Map<string, RuntimeValue>)].map(([key, item]) => [key, toPython(item)]));
    case 'ArrayValue':
    case 'TupleValue':
      return (value.value as RuntimeValue[]).map(toPython);
    case 'FloatValue':
      return new PythonFloat(value.value as number);
    case 'IntegerValue':
    case 'StringValue':
    case 'BooleanValue':
      return value.value as PythonJsonValue;
    case 'NullValue':
    case 'UndefinedValue':
      return null;
    default:
      throw new Error(`Object of type ${value.type} is not JSON serializable`);
  }
}

interface FilterNode {
  type: string;
  value?: string;
  callee?: { type: string; value?: string };
  args?: unknown[];
}

/** The interpreter's members used here; TypeScript marks them private, JavaScript has them as ordinary methods. */
interface InterpreterInternals {
  run(program: unknown): { value: string };
  applyFilter(operand: RuntimeValue, filter: FilterNode, environment: Environment): RuntimeValue;
  evaluateArguments(args: unknown[], environment: Environment): [RuntimeValue[], Map<string, RuntimeValue>];
}
const BaseInterpreter = Interpreter as unknown as new (environment: Environment) => InterpreterInternals;

/** The `tojson` keyword arguments the SDK's filter passes on to `json.dumps`. */
function tojsonOptions(kwargs: Map<string, RuntimeValue>): JsonDumpsOptions {
  const options: JsonDumpsOptions = { ensureAscii: false, sortKeys: false };
  const flag = (name: string) => kwargs.get(name)?.value;
  if (typeof flag('ensure_ascii') === 'boolean') options.ensureAscii = flag('ensure_ascii') as boolean;
  if (typeof flag('sort_keys') === 'boolean') options.sortKeys = flag('sort_keys') as boolean;
  if (typeof flag('indent') === 'number') options.indent = flag('indent') as number;
  const separators = kwargs.get('separators');
  if (separators && Array.isArray(separators.value)) {
    const [item, key] = (separators.value as RuntimeValue[]).map((part) => part.value);
    if (typeof item === 'string' && typeof key === 'string') options.separators = [item, key];
  }
  return options;
}

/**
 * @huggingface/jinja's interpreter with the OpenHands SDK's `tojson`:
 * `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`, its keyword
 * arguments overridable from the template.
 */
class SdkInterpreter extends BaseInterpreter {
  override applyFilter(operand: RuntimeValue, filter: FilterNode, environment: Environment): RuntimeValue {
    const name =
      filter.type === 'Identifier'
        ? filter.value
        : filter.type === 'CallExpression' && filter.callee?.type === 'Identifier'
          ? filter.callee.value
          : undefined;
    if (name !== 'tojson') return super.applyFilter(operand, filter, environment);
    const kwargs =
      filter.type === 'CallExpression' ? this.evaluateArguments(filter.args ?? [], environment)[1] : new Map<string, RuntimeValue>();
    // The library's own tojson gives a string value of the right class; only its text is replaced.
    const result = super.applyFilter(operand, { type: 'Identifier', value: 'tojson' }, environment);
    result.value = pythonJsonDumps(toPython(operand), tojsonOptions(kwargs));
    return result;
  }
}

function pythonRange(start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let index = from; step > 0 ? index < to : index > to; index += step) out.push(index);
  return out;
}

export interface CompiledChatTemplate {
  render(variables: Record<string, unknown>): string;
}

const compiled = new Map<string, CompiledChatTemplate>();

/** Parses `source` once (cached by its text); a syntax error is WNW_ERR_SCORE_TEMPLATE. */
export function compileChatTemplate(source: string): CompiledChatTemplate {
  const cached = compiled.get(source);
  if (cached) return cached;
  let program: unknown;
  try {
    // The SDK's environment: a block tag's own line leaves no indentation and no newline behind.
    program = parse(tokenize(source, { lstrip_blocks: true, trim_blocks: true }));
  } catch (error) {
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `chat template does not parse: ${(error as Error).message}`, { cause: error });
  }
  const template: CompiledChatTemplate = {
    render(variables) {
      const environment = new Environment();
      const globals: Record<string, unknown> = {
        true: true,
        false: false,
        none: null,
        True: true,
        False: false,
        None: null,
        raise_exception: (message: unknown) => {
          throw new Error(String(message));
        },
        range: pythonRange,
        // The rendered input must not depend on when it was rendered.
        strftime_now: () => {
          throw new Error('strftime_now is not available: serialization is deterministic');
        },
      };
      for (const [key, value] of Object.entries({ ...globals, ...variables })) environment.set(key, value);
      try {
        return new SdkInterpreter(environment).run(program).value;
      } catch (error) {
        throw wnwError('WNW_ERR_SCORE_TEMPLATE', `chat template failed to render: ${(error as Error).message}`, { cause: error });
      }
    },
  };
  if (compiled.size >= 16) compiled.delete(compiled.keys().next().value!);
  compiled.set(source, template);
  return template;
}
