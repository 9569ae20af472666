/**
 * A unified diff drawn side by side with syntax colours by diff2html (its slim highlight.js set).
 * diff2html escapes every line and file name it renders; the page's CSP stops anything else.
 */
import { Diff2HtmlUI } from 'diff2html/lib/ui/js/diff2html-ui-slim.js';
import { h } from './dom.js';

export function diffView(patch: string | null | undefined): HTMLElement {
  if (!patch) return h('p', { class: 'muted', id: 'diff' }, 'No patch.');
  const target = h('div', { id: 'diff', class: 'diff' });
  const ui = new Diff2HtmlUI(target, patch, {
    outputFormat: 'side-by-side',
    drawFileList: true,
    fileListToggle: true,
    fileListStartVisible: true,
    matching: 'lines',
    highlight: true,
    synchronisedScroll: true,
    stickyFileHeaders: false,
    fileContentToggle: false,
  });
  ui.draw();
  return target;
}
