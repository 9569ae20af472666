/**
 * The API key, when the server asks for one: typed into the page, kept in sessionStorage (this
 * tab only, gone when it closes), sent as a header. Never put in a URL or in localStorage.
 */
import { h } from './dom.js';

const STORAGE_KEY = 'winnower.api-key';

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // No storage: nothing kept.
  }
}

/** The form asking for a key; `onKey` runs once one is given. */
export function keyForm(message: string, onKey: () => void): HTMLElement {
  const input = h('input', {
    type: 'password',
    id: 'api-key',
    name: 'api-key',
    autocomplete: 'off',
    placeholder: 'API key',
    required: true,
  }) as HTMLInputElement;
  return h(
    'form',
    {
      class: 'key-form',
      id: 'key-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) return;
        try {
          sessionStorage.setItem(STORAGE_KEY, key);
        } catch {
          // Without storage the key cannot outlive this call; it is asked again on the next page.
        }
        onKey();
      },
    },
    h('h2', {}, 'API key'),
    h('p', {}, message),
    h('p', { class: 'muted' }, 'The key is kept in this tab only (sessionStorage) and sent in the Authorization header.'),
    input,
    ' ',
    h('button', { type: 'submit', id: 'api-key-submit' }, 'Open'),
  );
}
