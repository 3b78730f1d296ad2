/**
 * The stream features modules registered (the registration shape is the plugin API's), offered to an
 * authenticated client after the kernel's bind and session.
 */
import type { FeatureContext, StreamFeatureRegistration, XmlElement } from '@service/plugin-api';

export class StreamFeatures {
  #features: Array<StreamFeatureRegistration & { owner: string }> = [];

  register(feature: StreamFeatureRegistration, owner: string): void {
    this.#features.push({ ...feature, owner });
  }

  removeOwner(owner: string): void {
    this.#features = this.#features.filter((f) => f.owner !== owner);
  }

  /** The features of an authenticated stream. */
  build(ctx: FeatureContext): XmlElement[] {
    return this.#features.map((f) => f.build(ctx)).filter((e): e is XmlElement => e !== undefined);
  }
}
