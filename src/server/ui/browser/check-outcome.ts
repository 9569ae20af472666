/**
 * A test outcome as the inspector draws it: a run that could not run (`timeout`, `error`: the
 * sandbox or runner failed, the run ran past its limit, a Harbor reward file could not be read)
 * says nothing about the patch, so it gets its own muted `could not run` badge, never the red of
 * a failure (docs/inspector.md). No DOM here, so that tests run it in Node; dom.ts draws the badge.
 */

export interface OutcomeBadge {
  /** The badge's class suffix: the status itself, or `could-not-run`. */
  kind: string;
  word: string;
  title?: string;
}

const COULD_NOT_RUN: Record<string, string> = {
  timeout: 'the tests ran past their time limit',
  error: 'the sandbox, the runner or its output failed',
};

export function outcomeBadge(status: string): OutcomeBadge {
  const why = COULD_NOT_RUN[status];
  if (why === undefined) return { kind: status, word: status };
  return { kind: 'could-not-run', word: `could not run (${status})`, title: `${why}: no evidence for or against the patch` };
}
