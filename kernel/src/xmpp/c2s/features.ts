/**
 * Stream features that modules add to what an authenticated client is offered (stream management, roster
 * versioning, client state indication…). The kernel itself offers STARTTLS, SASL, bind and session.
 */
import type { XmlElement } from '../xml/element.js';

export interface FeatureContext {
  /** The authenticated account's domain. */
  readonly host: string;
  readonly secure: boolean;
}

export interface StreamFeatureRegistration {
  /** The feature element to offer, or undefined to offer nothing on this stream. */
  build(ctx: FeatureContext): XmlElement | undefined;
}

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
