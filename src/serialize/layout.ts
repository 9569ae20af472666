/**
 * A layout: which pieces of a document are kept, cut or dropped (the step plan plus the
 * last-resort head/tail cuts), and its assembly into the final text.
 */
import type { StepPlan } from './fit-budget.js';
import type { SerializationDocument } from './serialize-document.js';

/** The instance piece as every candidate of the task gets it (the issue capped at its budget share). */
export interface Prefix {
  instance: string;
  /** The issue as rendered (whole, or head + tail). */
  issue: string;
  tokens: number;
  cut: boolean;
}

export interface Layout {
  plan: StepPlan;
  prefix: Prefix;
  patch?: string;
  /** Step position → cut action. */
  actions: Map<number, string>;
  /** `step:observation` positions → cut observation text. */
  observations: Map<string, string>;
}

export function uncutLayout(document: SerializationDocument): Layout {
  const plan: StepPlan = {
    elided: document.steps.map(() => false),
    cut: document.steps.map((step) => step.observations.map(() => false)),
    dropped: null,
    tokens: 0,
  };
  const prefix: Prefix = { instance: document.instance, issue: document.problemStatement, tokens: 0, cut: false };
  return { plan, prefix, actions: new Map(), observations: new Map() };
}

export function isDropped(plan: StepPlan, position: number): boolean {
  return plan.dropped !== null && position >= plan.dropped.start && position < plan.dropped.end;
}

export function assemble(document: SerializationDocument, layout: Layout): { text: string; prefixChars: number } {
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
