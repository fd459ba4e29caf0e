/**
 * What the query sees of one Kafka record. The consumer decodes key and value
 * (JSON values, strings, numbers or null) before the filter and projection run.
 */
export interface RecordView {
  key: unknown;
  value: unknown;
  partition: number;
  offset: number;
  /** Epoch milliseconds. */
  timestamp: number;
  /** Size in bytes of the raw key and value. */
  keySize: number;
  valueSize: number;
  /**
   * The end offset (high watermark) of a partition: the offset the next record
   * will get, so `_meta.offset >= LAST_OFFSET() - 10` selects the last 10.
   */
  lastOffset(partition: number): number;
}
