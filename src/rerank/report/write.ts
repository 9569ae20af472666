/** Writes the Markdown report and its HTML twin beside it. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { renderHtmlReport } from './html.js';
import { renderMarkdownReport } from './markdown.js';
import type { ReportInput } from './types.js';

/** Writes `mdPath` (e.g. `out/report.md`) and the HTML beside it (`out/report.html`); returns both paths. */
export async function writeReports(input: ReportInput, mdPath: string): Promise<{ markdown: string; html: string }> {
  const html = /\.md$/i.test(mdPath) ? mdPath.replace(/\.md$/i, '.html') : `${mdPath}.html`;
  await mkdir(dirname(mdPath), { recursive: true });
  await writeFile(mdPath, renderMarkdownReport(input), 'utf8');
  await writeFile(html, renderHtmlReport(input), 'utf8');
  return { markdown: mdPath, html };
}
