/** The brokers API (`/api/brokers`) and the broker config changes (`/api/configs/brokers`); types from the server's schemas. */
import { useQuery } from "@tanstack/react-query";
import type { BrokerConfigView, BrokerView } from "../../src/domains/brokers/schemas.ts";
import { api } from "../session.ts";

export type { BrokerConfigView, BrokerView };

const KEY = ["brokers"] as const;
/** `brokerId` null: the cluster-wide default every broker falls back to. */
const configPath = (brokerId: number | null) => (brokerId === null ? "/api/configs/brokers" : `/api/configs/brokers/${brokerId}`);

export const brokersApi = {
  key: KEY,
  list: () => api<BrokerView[]>("/api/brokers"),
  configs: (brokerId: number) => api<BrokerConfigView[]>(`/api/brokers/${brokerId}/configs`),
  /** A string value as given: the API takes "" as "not given", so an empty value is refused before. */
  setConfig: (brokerId: number | null, name: string, value: string) =>
    api<string>(configPath(brokerId), { method: "PUT", body: JSON.stringify({ [name]: value }) }),
  removeConfig: (brokerId: number | null, name: string) =>
    api<string>(configPath(brokerId), { method: "DELETE", body: JSON.stringify([name]) }),
};

export const useBrokers = () => useQuery({ queryKey: KEY, queryFn: brokersApi.list });
export const useBrokerConfigs = (brokerId: number | null) =>
  useQuery({ queryKey: [...KEY, brokerId, "configs"], queryFn: () => brokersApi.configs(brokerId!), enabled: brokerId !== null });
