/** Lists the server pages: the next page is asked once the last loaded row scrolls into view. */
import type { Virtualizer } from "@tanstack/react-virtual";
import { useEffect } from "react";

export function useLoadMore(
  virtual: Virtualizer<HTMLDivElement, Element>,
  loaded: number,
  q: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown },
): void {
  const last = virtual.getVirtualItems().at(-1)?.index ?? -1;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = q;
  useEffect(() => {
    if (last >= loaded - 1 && hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [last, loaded, hasNextPage, isFetchingNextPage, fetchNextPage]);
}
