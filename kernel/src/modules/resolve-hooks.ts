/**
 * Node module resolution hooks (node:module register), loaded once per process by plugin-resolution.ts.
 *
 * Every `@service/...` specifier (the plugin API, a module's API package) resolves as if the server itself
 * imported it, whoever imports it: a plugin installed with its own copy of @service/plugin-api in its
 * node_modules gets the running server's copy, so there is one copy of each class (CommandError, XmlElement,
 * Jid…) in the process, and a plugin built against an older compatible release runs on this one.
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
  return next(specifier, context);
}
