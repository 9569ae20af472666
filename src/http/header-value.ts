/**
 * Secrets that travel in an HTTP header (`Authorization: Bearer <key>`, `X-API-Key`, a harness's
 * key variable). A NUL, CR or LF there cannot be sent at all: undici refuses the header, so every
 * call would fail alike much later ("invalid authorization header"). Checked where the value is
 * given instead: a request field or a config key, named in the 400 or the config error.
 */
import { z } from 'zod';

/** Visible ASCII: what API keys are made of, and safe in any header (no spaces, which a header would trim). */
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/** An API key as a request or the config gives it; empty is allowed where the field means "none". */
export const HeaderSecret = z
  .string()
  .regex(VISIBLE_ASCII, 'an API key is sent in an HTTP header: visible ASCII only (no NUL, CR, LF, spaces or other control characters)');
