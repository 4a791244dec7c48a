/**
 * Follows one campaign live, as `agentctl campaign watch` does: the WatchCampaign stream
 * sends the campaign on every change until it is finished; a stream cut short is opened again
 * after a growing pause, and an error Control answered (not found, permission) ends the watch.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import type { Campaign } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { Api } from "./api.js";
import { isFinished } from "./format.js";

/** What the watch knows. */
export interface WatchState {
  readonly campaign: Campaign | undefined;
  /** When the last update arrived (ms since the epoch, the browser's clock). */
  readonly receivedAt: number;
  /** The stream is down and will be opened again; why. */
  readonly reconnecting: string | undefined;
  /** The watch ended on an error that reconnecting would not cure. */
  readonly error: unknown;
}

const TRANSIENT = [Code.Unavailable, Code.Aborted, Code.Unknown, Code.DeadlineExceeded];

function transient(error: unknown): boolean {
  return !(error instanceof ConnectError) || TRANSIENT.includes(error.code);
}

/** The live state of campaign `id`; the stream closes when the component goes away. */
export function useCampaignWatch(api: Api, id: string): WatchState {
  const [state, setState] = useState<WatchState>({
    campaign: undefined,
    receivedAt: 0,
    reconnecting: undefined,
    error: undefined,
  });
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    setState({ campaign: undefined, receivedAt: 0, reconnecting: undefined, error: undefined });
    const follow = async () => {
      let failures = 0;
      while (!signal.aborted) {
        try {
          for await (const update of api.campaigns.watchCampaign({ id }, { signal })) {
            failures = 0;
            const campaign = update.campaign;
            if (!campaign) continue;
            setState({
              campaign,
              receivedAt: Date.now(),
              reconnecting: undefined,
              error: undefined,
            });
            if (isFinished(campaign)) return;
          }
          throw new ConnectError("the watch stream ended early", Code.Unavailable);
        } catch (error) {
          if (signal.aborted) return;
          if (!transient(error)) {
            setState((s) => ({ ...s, reconnecting: undefined, error }));
            return;
          }
          failures += 1;
          const waitMs = Math.min(10_000, 250 * 2 ** failures);
          const why = error instanceof Error ? error.message : String(error);
          setState((s) => ({ ...s, reconnecting: why }));
          await new Promise((resolve) => setTimeout(resolve, waitMs));
        }
      }
    };
    void follow();
    return () => controller.abort();
  }, [api, id]);
  return state;
}
