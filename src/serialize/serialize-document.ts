/**
 * Renders a (task, trajectory) pair through a template into pieces: the shared prefix (system +
 * instance), one piece per step and per observation with their cut variants (rendered when first
 * read), the patch and the question. Budget fitting picks among these pieces; nothing here counts tokens.
 */
import { repoNameOf, type Task } from '../types/task.js';
import type { ToolCall, Trajectory } from '../types/trajectory.js';
import { headTail, type Elided } from './head-tail.js';
import { renderField } from './render.js';
import type { TemplateFile, TemplateSettings } from './template-schema.js';
import { toolCallParameters, toSteps, trimNewlines, type Step } from './trajectory-steps.js';

export interface RenderedObservation {
  raw: string;
  full: string;
  /** Head + tail of `raw` with the marker; absent when the observation is too short to cut. */
  cutText?: string;
  /** The observation piece rendered with `cutText`. */
  cut?: string;
}

export interface RenderedStep {
  step: Step;
  full: string;
  /** The step with its thought replaced by the marker (same as `full` when there is no thought). */
  elided: string;
  observations: RenderedObservation[];
}

export interface SerializationDocument {
  system: string;
  /** The instance piece with the whole issue. */
  instance: string;
  problemStatement: string;
  patch: string;
  patchText: string;
  question: string;
  /** Placeholder shown instead of steps when a trajectory layout has none ('' otherwise). */
  noSteps: string;
  steps: RenderedStep[];
  render: DocumentRenderers;
}

export interface DocumentRenderers {
  instance(problemStatement: string): string;
  patch(patchText: string): string;
  step(step: Step, thought: string, action: string): string;
  observation(index: number, text: string): string;
  thoughtMarker(thought: string): string;
  stepsMarker(count: number, first: number, last: number): string;
  observationMarker(elided: Elided): string;
  textMarker(elided: Elided): string;
}

export function buildDocument(
  task: Task,
  trajectory: Trajectory,
  template: TemplateFile,
  settings: TemplateSettings,
): SerializationDocument {
  const common = { instance_id: task.instance_id, repo: repoNameOf(task) };
  const { markers, placeholders } = template;
  const at = (field: string): string => `${template.name}.${field}`;
  const orPlaceholder = (text: string, placeholder: string | undefined): string => (text === '' ? (placeholder ?? '') : text);

  const render: DocumentRenderers = {
    instance: (problemStatement) => renderField(template.instance, { ...common, problem_statement: problemStatement }, at('instance')),
    patch: (patchText) => renderField(template.patch, { ...common, patch: orPlaceholder(patchText, placeholders.patch) }, at('patch')),
    step: (step, thought, action) =>
      renderField(
        template.step ?? '',
        {
          ...common,
          index: step.index,
          thought: orPlaceholder(thought, placeholders.thought),
          action: orPlaceholder(action, placeholders.action),
        },
        at('step'),
      ),
    observation: (index, text) =>
      renderField(
        template.observation ?? '',
        { ...common, index, observation: orPlaceholder(text, placeholders.observation) },
        at('observation'),
      ),
    thoughtMarker: (thought) =>
      renderField(markers.thought ?? '', { chars: thought.length, lines: thought.split('\n').length }, at('markers.thought')),
    stepsMarker: (count, first, last) => renderField(markers.steps ?? '', { count, first, last }, at('markers.steps')),
    observationMarker: (elided) => renderField(markers.observation ?? '', { ...elided }, at('markers.observation')),
    textMarker: (elided) => renderField(markers.text, { ...elided }, at('markers.text')),
  };

  const formatToolCall = (call: ToolCall): string => {
    const parameters = toolCallParameters(call);
    const body = parameters
      ? parameters.map(([key, value]) => renderField(template.tool_parameter ?? '', { key, value }, at('tool_parameter'))).join('')
      : call.function.arguments.endsWith('\n')
        ? call.function.arguments
        : `${call.function.arguments}\n`;
    return renderField(template.tool_call ?? '', { name: call.function.name, parameters: body }, at('tool_call'));
  };

  const steps =
    template.layout === 'trajectory'
      ? toSteps(trajectory.messages, {
          includeReasoning: settings.include_reasoning,
          splitFencedAction: settings.split_fenced_action,
          formatToolCall,
        })
      : [];
  const patchText = trimNewlines(trajectory.patch);
  const problemStatement = trimNewlines(task.problem_statement);
  return {
    system: renderField(template.system, common, at('system')),
    instance: render.instance(problemStatement),
    problemStatement,
    patch: render.patch(patchText),
    patchText,
    question: renderField(template.question, common, at('question')),
    noSteps:
      template.layout === 'trajectory' && steps.length === 0
        ? renderField(placeholders.no_steps ?? '', common, at('placeholders.no_steps'))
        : '',
    steps: steps.map((step): RenderedStep => {
      // The cut variants are rendered when first read: a candidate that fits never needs them.
      let elided: string | undefined;
      return {
        step,
        full: render.step(step, step.thought, step.action),
        get elided() {
          elided ??=
            step.thought === '' ? render.step(step, '', step.action) : render.step(step, render.thoughtMarker(step.thought), step.action);
          return elided;
        },
        observations: step.observations.map((raw) => observationOf(step.index, raw)),
      };
    }),
    render,
  };

  function observationOf(index: number, raw: string): RenderedObservation {
    let variant: { cutText: string; cut: string } | null | undefined;
    const cutOf = () => {
      if (variant === undefined) {
        const cutText = headTail(raw, settings.observation_head_chars, settings.observation_tail_chars, render.observationMarker);
        variant = cutText === undefined ? null : { cutText, cut: render.observation(index, cutText) };
      }
      return variant ?? undefined;
    };
    return {
      raw,
      full: render.observation(index, raw),
      get cutText() {
        return cutOf()?.cutText;
      },
      get cut() {
        return cutOf()?.cut;
      },
    };
  }
}
