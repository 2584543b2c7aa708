class Solution {
    long longestDistinctWindow(String text) {
        int[] chars = text.codePoints().toArray();
        Map<Integer, Integer> lastSeen = new HashMap<>();
        int start = 0, best = 0;
        for (int index = 0; index < chars.length; index++) {
            Integer last = lastSeen.put(chars[index], index);
            if (last != null && last >= start) {
                start = last + 1;
            }
            best = Math.max(best, index - start + 1);
        }
        return best;
    }
}
