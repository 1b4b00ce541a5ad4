/*
 * The register tile of the blocked matmul kernel (src/bench/matmul.c), one
 * copy per instruction set: matmul.c includes this file several times, each
 * time with these defined (and undefines them after):
 *   MICRO_FN    the function's name
 *   MICRO_ATTR  its attributes (a target("...") or nothing)
 *   VT, VW      a GCC vector type of VW floats, the target's native width
 *   NV          vectors of a tile's row at once (1 or 2)
 * and MR, NR as matmul.c has them. No include guard, on purpose.
 *
 * c (an MR x NR tile, m rows and w columns of it real, row stride ldc) = or
 * += ap (an MR-tall panel, kc deep) x bp (an NR-wide panel, kc deep), in
 * strips of NV * VW columns, each strip's MR x NV accumulators in registers.
 */
MICRO_ATTR static void
MICRO_FN(size_t kc, const float *restrict ap, const float *restrict bp, float *restrict c,
         size_t ldc, size_t m, size_t w, bool add)
{
	for (size_t s = 0; s < w; s += NV * VW) {
		const VT z = { 0 };
		VT c00 = z, c10 = z, c20 = z, c30 = z, c40 = z, c50 = z;
#if NV == 2
		VT c01 = z, c11 = z, c21 = z, c31 = z, c41 = z, c51 = z;
#endif
		float tile[MR][NV * VW];
		size_t cols = w - s < NV * VW ? w - s : NV * VW;

		for (size_t k = 0; k < kc; k++) {
			const float *bk = bp + k * NR + s;
			const float *ak = ap + k * MR;
			VT b0 = *(const VT *)(const void *)bk;
#if NV == 2
			VT b1 = *(const VT *)(const void *)(bk + VW);
			float a;

			/* row by row, so that one broadcast is live at a time */
			a = ak[0];
			c00 += a * b0;
			c01 += a * b1;
			a = ak[1];
			c10 += a * b0;
			c11 += a * b1;
			a = ak[2];
			c20 += a * b0;
			c21 += a * b1;
			a = ak[3];
			c30 += a * b0;
			c31 += a * b1;
			a = ak[4];
			c40 += a * b0;
			c41 += a * b1;
			a = ak[5];
			c50 += a * b0;
			c51 += a * b1;
#else
			c00 += ak[0] * b0;
			c10 += ak[1] * b0;
			c20 += ak[2] * b0;
			c30 += ak[3] * b0;
			c40 += ak[4] * b0;
			c50 += ak[5] * b0;
#endif
		}
		memcpy(tile[0], &c00, sizeof(VT));
		memcpy(tile[1], &c10, sizeof(VT));
		memcpy(tile[2], &c20, sizeof(VT));
		memcpy(tile[3], &c30, sizeof(VT));
		memcpy(tile[4], &c40, sizeof(VT));
		memcpy(tile[5], &c50, sizeof(VT));
#if NV == 2
		memcpy(tile[0] + VW, &c01, sizeof(VT));
		memcpy(tile[1] + VW, &c11, sizeof(VT));
		memcpy(tile[2] + VW, &c21, sizeof(VT));
		memcpy(tile[3] + VW, &c31, sizeof(VT));
		memcpy(tile[4] + VW, &c41, sizeof(VT));
		memcpy(tile[5] + VW, &c51, sizeof(VT));
#endif
		for (size_t r = 0; r < m; r++) {
			float *row = c + r * ldc + s;

			if (add)
				for (size_t x = 0; x < cols; x++)
					row[x] += tile[r][x];
			else
				for (size_t x = 0; x < cols; x++)
					row[x] = tile[r][x];
		}
	}
}
