/**
 * The stream features modules registered (the registration shape is the plugin API's), offered to an
 * authenticated client after the kernel's bind and session.
 */
import type { FeatureContext, StreamFeatureRegistration, XmlElement } from '@service/plugin-api';

export class StreamFeatures {
  #features: Array<StreamFeatureRegistration & { owner: string; host?: string }> = [];

  /** `host`: offered on that virtual host's streams only (a per-host module's), else on every host's. */
  register(feature: StreamFeatureRegistration, owner: string, host?: string): void {
    this.#features.push({ build: (ctx) => feature.build(ctx), owner, ...(host ? { host } : {}) });
  }

  removeOwner(owner: string): void {
    this.#features = this.#features.filter((f) => f.owner !== owner);
  }

  /** The features of an authenticated stream. */
  build(ctx: FeatureContext): XmlElement[] {
    return this.#features
      .filter((f) => f.host === undefined || f.host === ctx.host)
      .map((f) => f.build(ctx))
      .filter((e): e is XmlElement => e !== undefined);
  }
}
