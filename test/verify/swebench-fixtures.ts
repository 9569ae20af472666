/**
 * Loads the SWE-bench harness logs in test/fixtures/swebench-logs (see its README for provenance
 * and the verdicts known to be wrong).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const ROOT = new URL('../fixtures/swebench-logs/', import.meta.url);

export interface HarnessReport {
  resolved: boolean;
  f2pSuccess: string[];
  f2pFailure: string[];
  p2pSuccess: string[];
  p2pFailure: string[];
}

export interface SwebenchFixture {
  instanceId: string;
  log: string;
  evalSh: string;
  /** The command between the harness markers in eval.sh. */
  testCommand: string;
  /** The gold test patch applied by eval.sh. */
  testPatch: string;
  report: HarnessReport | undefined;
}

export const FIXTURE_NAMES = readdirSync(ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

export function loadFixture(instanceId: string): SwebenchFixture {
  const dir = new URL(`${instanceId}/`, ROOT);
  const log = readFileSync(new URL('test_output.txt', dir), 'utf8');
  const evalSh = readFileSync(new URL('eval.sh', dir), 'utf8');
  const testCommand = /^: '>>>>> Start Test Output'\n([\s\S]*?)\n: '>>>>> End Test Output'/m.exec(evalSh)?.[1] ?? '';
  const testPatch = /<<'EOF_114329324912'\n([\s\S]*?)\nEOF_114329324912/.exec(evalSh)?.[1] ?? '';
  const reportUrl = new URL('report.json', dir);
  let report: HarnessReport | undefined;
  if (existsSync(reportUrl)) {
    const raw = JSON.parse(readFileSync(reportUrl, 'utf8')) as Record<string, {
      resolved: boolean;
      tests_status: Record<'FAIL_TO_PASS' | 'PASS_TO_PASS', { success: string[]; failure: string[] }>;
    }>;
    const entry = raw[instanceId]!;
    report = {
      resolved: entry.resolved,
      f2pSuccess: entry.tests_status.FAIL_TO_PASS.success,
      f2pFailure: entry.tests_status.FAIL_TO_PASS.failure,
      p2pSuccess: entry.tests_status.PASS_TO_PASS.success,
      p2pFailure: entry.tests_status.PASS_TO_PASS.failure,
    };
  }
  return { instanceId, log, evalSh, testCommand, testPatch, report };
}

/** The task as SWE-bench defines it: F2P/P2P are the union of success and failure lists. */
export function listsOf(report: HarnessReport): { failToPass: string[]; passToPass: string[] } {
  return {
    failToPass: [...report.f2pSuccess, ...report.f2pFailure],
    passToPass: [...report.p2pSuccess, ...report.p2pFailure],
  };
}
