/**
 * The OpenAPI 3.1 description of this API, served by the handler itself:
 *
 *   GET /api                  GET /api/openapi.json
 *   GET /api/v2               GET /api/v2/openapi.json    (the definitions a call at version 2 gets)
 *
 * It lists the commands loaded now, so it changes as modules are enabled and disabled. It is served
 * without authentication, like the 404 of an unknown command it only says which commands exist; who may
 * call them is still up to api_permissions.
 */
import { sendJson, type HttpContext, type ServerServices } from '@service/plugin-api';

const VERSION_SEGMENT = /^v(\d{1,6})$/;
const DOCUMENT_NAME = 'openapi.json';

export interface OpenApiTarget {
  /** The API version the document describes (the latest definitions when undefined). */
  readonly version?: number;
  /** Where the operations' paths start: the mount and any version segment. */
  readonly serverUrl: string;
}

/**
 * Whether a GET asks for the document: nothing, `openapi.json`, or a lone `vN` below the mount (after
 * the version segment was taken off as for a command call).
 */
export function openApiTarget(mount: string, segments: readonly string[], version: number | undefined, rest: readonly string[]): OpenApiTarget | undefined {
  const lone = rest.length === 1 ? VERSION_SEGMENT.exec(rest[0]!) : null;
  if (lone) return { version: Number(lone[1]), serverUrl: joinPath(mount, segments) };
  if (rest.length === 0 || (rest.length === 1 && rest[0] === DOCUMENT_NAME)) {
    return { version, serverUrl: joinPath(mount, segments.slice(0, segments.length - rest.length)) };
  }
  return undefined;
}

export async function serveOpenApi(ctx: HttpContext, services: ServerServices, target: OpenApiTarget): Promise<void> {
  sendJson(ctx, await services.docs.openApi({ version: target.version, serverUrl: target.serverUrl }));
}

function joinPath(mount: string, segments: readonly string[]): string {
  const path = [mount.replace(/\/+$/, ''), ...segments.map(encodeURIComponent)].join('/');
  return path || '/';
}
