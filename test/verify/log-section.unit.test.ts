import { describe, expect, it } from 'vitest';
import { extractTestSection } from '../../src/verify/log-section.js';

describe('extractTestSection', () => {
  it('keeps only the text between the harness markers', () => {
    const log = "setup noise\n+ : '>>>>> Start Test Output'\nPASSED a.py::t\n+ : '>>>>> End Test Output'\nteardown\n";
    expect(extractTestSection(log)).toEqual({ text: 'PASSED a.py::t\n', marked: true, ended: true, timedOut: false });
  });

  it('accepts markers printed without set -x', () => {
    const log = '>>>>> Start Test Output\nok\n>>>>> End Test Output\n';
    expect(extractTestSection(log).text).toBe('ok\n');
  });

  it('ignores the marker text inside other lines (a patch quoting eval.sh)', () => {
    const log = "+echo '>>>>> Start Test Output' quoted\nall of it\n";
    expect(extractTestSection(log)).toMatchObject({ text: log, marked: false });
  });

  it('reads a start marker without an end marker and a Timeout error line as a timeout', () => {
    const log = "+ : '>>>>> Start Test Output'\nt.py ....\n\nTimeout error: 1800 seconds exceeded.\n";
    expect(extractTestSection(log)).toEqual({
      text: 't.py ....\n\nTimeout error: 1800 seconds exceeded.\n',
      marked: true,
      ended: false,
      timedOut: true,
    });
    expect(extractTestSection("+ : '>>>>> Start Test Output'\ncut short\n").timedOut).toBe(false);
  });

  it('parses the whole log when a marker appears twice (output of the code under test)', () => {
    const forged =
      "+ : '>>>>> Start Test Output'\n>>>>> Start Test Output\nok fake\n>>>>> End Test Output\nFAIL real\n+ : '>>>>> End Test Output'\n";
    expect(extractTestSection(forged)).toEqual({ text: forged, marked: false, ended: false, timedOut: false });
    const earlyEnd = "+ : '>>>>> Start Test Output'\nok fake\n>>>>> End Test Output\nFAIL real\n+ : '>>>>> End Test Output'\n";
    expect(extractTestSection(earlyEnd).text).toBe(earlyEnd);
  });

  it('parses the whole log when there are no markers', () => {
    expect(extractTestSection('PASSED a.py::t\n')).toEqual({ text: 'PASSED a.py::t\n', marked: false, ended: false, timedOut: false });
  });
});
