/** Rerank reports: Markdown and a self-contained HTML page with inline SVG figures. */
export type { ReportInput, RunInfo, SelectionSummary, TruncationStats } from './types.js';
export { renderMarkdownReport } from './markdown.js';
export { renderHtmlReport } from './html.js';
export { writeReports } from './write.js';
export { summarizeSelection, truncationStats } from './summary.js';
export { histogramSvg, calibrationSvg } from './svg.js';
