/**
 * Node module resolution hooks (node:module register), loaded once per process by plugin-resolution.ts.
 *
 * Every `@service/...` specifier (the plugin API, a module's API package) resolves as if the server itself
 * imported it, whoever imports it: a plugin installed with its own copy of @service/plugin-api in its
 * node_modules gets the running server's copy, so there is one copy of each class (CommandError, XmlElement,
 * Jid…) in the process, and a plugin built against an older compatible release runs on this one.
 *
 * A module's code is reloaded by importing its entry under a new generation (`index.js?gen=N`, see
 * catalog.ts). ESM caches by URL, so the generation is carried to every relative import of that graph: the
 * whole module, not only its entry file, is read again. Packages (bare specifiers) are not reloaded.
 */
interface ResolveContext {
  readonly parentURL?: string;
  readonly conditions: readonly string[];
  readonly importAttributes: Record<string, string>;
}
type NextResolve = (specifier: string, context?: Partial<ResolveContext>) => Promise<{ url: string; format?: string | null }>;

let serverParentURL: string | undefined;

export function initialize(data: { parentURL: string }): void {
  serverParentURL = data.parentURL;
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string; format?: string | null }> {
  if (serverParentURL && specifier.startsWith('@service/') && context.parentURL !== serverParentURL) {
    return next(specifier, { ...context, parentURL: serverParentURL });
  }
  const generation = generationOf(context.parentURL);
  if (generation !== undefined && (specifier.startsWith('./') || specifier.startsWith('../'))) {
    const resolved = await next(specifier, context);
    if (!resolved.url.startsWith('file:') || resolved.url.includes('/node_modules/')) return resolved;
    const url = new URL(resolved.url);
    url.searchParams.set(GENERATION_PARAM, generation);
    return { ...resolved, url: url.href };
  }
  return next(specifier, context);
}

/** The query parameter naming a code generation (also written by catalog.ts). */
const GENERATION_PARAM = 'gen';

function generationOf(parentURL: string | undefined): string | undefined {
  if (!parentURL?.startsWith('file:') || !parentURL.includes(`${GENERATION_PARAM}=`)) return undefined;
  return new URL(parentURL).searchParams.get(GENERATION_PARAM) ?? undefined;
}
