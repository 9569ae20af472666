/**
 * The model an operator's scorer backend serves, for `--backend-url` without `--backend-model`:
 * vLLM and SGLang both list it at `GET /v1/models`; the first one listed is what winnower's
 * scorer config names (it needs the name in every request body).
 */
import { request } from 'undici';
import { wnwError } from '../errors.js';

export async function servedModel(backendUrl: string, apiKey: string | undefined): Promise<string> {
  const url = `${backendUrl.replace(/\/$/, '')}/v1/models`;
  let status: number;
  let text: string;
  try {
    const response = await request(url, {
      headers: { accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (error) {
    throw wnwError(
      'WNW_ERR_SCORE_UPSTREAM',
      `--backend-url: GET ${url} failed (${error instanceof Error ? error.message : String(error)}); is the backend running and reachable from here?`,
      { cause: error, details: { field: 'backend-url' } },
    );
  }
  if (status >= 300)
    throw wnwError(
      'WNW_ERR_SCORE_UPSTREAM',
      `--backend-url: GET ${url} answered ${status}: ${text.slice(0, 300)} (name the model with --backend-model to skip this lookup)`,
      { details: { field: 'backend-url', status } },
    );
  let id: unknown;
  try {
    id = (JSON.parse(text) as { data?: Array<{ id?: unknown }> }).data?.[0]?.id;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'string' || !id)
    throw wnwError('WNW_ERR_SCORE_RESPONSE', `--backend-url: GET ${url} lists no model; name it with --backend-model`, {
      details: { field: 'backend-model' },
    });
  return id;
}
