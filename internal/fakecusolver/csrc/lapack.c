// The factorizations and solves, textbook algorithms in double precision
// on column-major arrays, with LAPACK's conventions: 1-based pivots, the
// info of the first zero pivot or non-positive minor, Householder
// reflectors H = I - tau·v·vᵀ with v(1) = 1 stored below the diagonal,
// eigenvalues ascending and singular values descending. Eigenvalues and
// singular values come from Jacobi rotations (cyclic two-sided for the
// symmetric case, one-sided for the SVD): slower than LAPACK's methods,
// as accurate, and short.
#include "fakecusolver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AT(a, ld, i, j) ((a)[(size_t)(i) + (size_t)(j) * (size_t)(ld)])

enum { MAX_SWEEPS = 100 };

int lu(int m, int n, double *a, int lda, int *ipiv) {
	int info = 0, k = m < n ? m : n;
	for (int j = 0; j < k; j++) {
		int p = j;
		for (int i = j + 1; i < m; i++)
			if (fabs(AT(a, lda, i, j)) > fabs(AT(a, lda, p, j)))
				p = i;
		ipiv[j] = p + 1;
		if (AT(a, lda, p, j) == 0) {
			if (info == 0)
				info = j + 1;
			continue; // the column below is zero: nothing to eliminate
		}
		if (p != j)
			for (int c = 0; c < n; c++) {
				double t = AT(a, lda, j, c);
				AT(a, lda, j, c) = AT(a, lda, p, c);
				AT(a, lda, p, c) = t;
			}
		double d = AT(a, lda, j, j);
		for (int i = j + 1; i < m; i++)
			AT(a, lda, i, j) /= d;
		for (int c = j + 1; c < n; c++) {
			double u = AT(a, lda, j, c);
			for (int i = j + 1; i < m; i++)
				AT(a, lda, i, c) -= AT(a, lda, i, j) * u;
		}
	}
	return info;
}

static void swap_rows(double *b, int ldb, int nrhs, int i, int p) {
	if (i == p)
		return;
	for (int c = 0; c < nrhs; c++) {
		double t = AT(b, ldb, i, c);
		AT(b, ldb, i, c) = AT(b, ldb, p, c);
		AT(b, ldb, p, c) = t;
	}
}

void lu_solve(int trans, int n, int nrhs, const double *a, int lda, const int *ipiv, double *b, int ldb) {
	if (trans == OP_N) {
		// P·A = L·U: x = U⁻¹·L⁻¹·P·b.
		for (int i = 0; i < n; i++)
			swap_rows(b, ldb, nrhs, i, ipiv[i] - 1);
		for (int c = 0; c < nrhs; c++) {
			for (int j = 0; j < n; j++)
				for (int i = j + 1; i < n; i++)
					AT(b, ldb, i, c) -= AT(a, lda, i, j) * AT(b, ldb, j, c);
			for (int j = n - 1; j >= 0; j--) {
				AT(b, ldb, j, c) /= AT(a, lda, j, j);
				for (int i = 0; i < j; i++)
					AT(b, ldb, i, c) -= AT(a, lda, i, j) * AT(b, ldb, j, c);
			}
		}
		return;
	}
	// Aᵀ = Uᵀ·Lᵀ·P: x = Pᵀ·L⁻ᵀ·U⁻ᵀ·b.
	for (int c = 0; c < nrhs; c++) {
		for (int j = 0; j < n; j++) {
			double s = AT(b, ldb, j, c);
			for (int i = 0; i < j; i++)
				s -= AT(a, lda, i, j) * AT(b, ldb, i, c);
			AT(b, ldb, j, c) = s / AT(a, lda, j, j);
		}
		for (int j = n - 1; j >= 0; j--) {
			double s = AT(b, ldb, j, c);
			for (int i = j + 1; i < n; i++)
				s -= AT(a, lda, i, j) * AT(b, ldb, i, c);
			AT(b, ldb, j, c) = s;
		}
	}
	for (int i = n - 1; i >= 0; i--)
		swap_rows(b, ldb, nrhs, i, ipiv[i] - 1);
}

// L(i, j), i ≥ j, of the Cholesky factor in a's triangle: the lower one
// holds L, the upper one U = Lᵀ.
#define LF(i, j) (*(upper ? &AT(a, lda, j, i) : &AT(a, lda, i, j)))

int chol(int upper, int n, double *a, int lda) {
	for (int j = 0; j < n; j++) {
		double d = LF(j, j);
		for (int k = 0; k < j; k++)
			d -= LF(j, k) * LF(j, k);
		if (!(d > 0)) {
			LF(j, j) = d;
			return j + 1;
		}
		d = sqrt(d);
		LF(j, j) = d;
		for (int i = j + 1; i < n; i++) {
			double s = LF(i, j);
			for (int k = 0; k < j; k++)
				s -= LF(i, k) * LF(j, k);
			LF(i, j) = s / d;
		}
	}
	return 0;
}

void chol_solve(int upper, int n, int nrhs, const double *ca, int lda, double *b, int ldb) {
	double *a = (double *)ca; // LF's pointer; only read here
	for (int c = 0; c < nrhs; c++) {
		for (int j = 0; j < n; j++) {
			double s = AT(b, ldb, j, c);
			for (int k = 0; k < j; k++)
				s -= LF(j, k) * AT(b, ldb, k, c);
			AT(b, ldb, j, c) = s / LF(j, j);
		}
		for (int j = n - 1; j >= 0; j--) {
			double s = AT(b, ldb, j, c);
			for (int k = j + 1; k < n; k++)
				s -= LF(k, j) * AT(b, ldb, k, c);
			AT(b, ldb, j, c) = s / LF(j, j);
		}
	}
}

void qr(int m, int n, double *a, int lda, double *tau) {
	int k = m < n ? m : n;
	for (int j = 0; j < k; j++) {
		double alpha = AT(a, lda, j, j), xnorm = 0;
		for (int i = j + 1; i < m; i++)
			xnorm = hypot(xnorm, AT(a, lda, i, j));
		if (xnorm == 0) {
			tau[j] = 0; // H = I
			continue;
		}
		double beta = -copysign(hypot(alpha, xnorm), alpha);
		tau[j] = (beta - alpha) / beta;
		double scale = 1 / (alpha - beta);
		for (int i = j + 1; i < m; i++)
			AT(a, lda, i, j) *= scale;
		AT(a, lda, j, j) = beta;
		for (int c = j + 1; c < n; c++) {
			double w = AT(a, lda, j, c);
			for (int i = j + 1; i < m; i++)
				w += AT(a, lda, i, j) * AT(a, lda, i, c);
			w *= tau[j];
			AT(a, lda, j, c) -= w;
			for (int i = j + 1; i < m; i++)
				AT(a, lda, i, c) -= w * AT(a, lda, i, j);
		}
	}
}

// reflect applies H_r, whose v lies in column r of a from row r (v(r) = 1),
// to c from the left (left) or the right; nq is the order of H.
static void reflect(int left, int m, int n, int nq, int r, const double *a, int lda, double t, double *c, int ldc) {
	if (t == 0)
		return;
	if (left) {
		for (int col = 0; col < n; col++) {
			double w = AT(c, ldc, r, col);
			for (int i = r + 1; i < nq; i++)
				w += AT(a, lda, i, r) * AT(c, ldc, i, col);
			w *= t;
			AT(c, ldc, r, col) -= w;
			for (int i = r + 1; i < nq; i++)
				AT(c, ldc, i, col) -= w * AT(a, lda, i, r);
		}
		return;
	}
	for (int row = 0; row < m; row++) {
		double w = AT(c, ldc, row, r);
		for (int i = r + 1; i < nq; i++)
			w += AT(c, ldc, row, i) * AT(a, lda, i, r);
		w *= t;
		AT(c, ldc, row, r) -= w;
		for (int i = r + 1; i < nq; i++)
			AT(c, ldc, row, i) -= w * AT(a, lda, i, r);
	}
}

void apply_q(int left, int trans, int m, int n, int k, const double *a, int lda, const double *tau, double *c, int ldc) {
	// Q = H1·H2·…·Hk: Q·C and C·Qᵀ apply Hk first, Qᵀ·C and C·Q H1.
	int nq = left ? m : n;
	int last_first = left == (trans == OP_N);
	for (int s = 0; s < k; s++) {
		int r = last_first ? k - 1 - s : s;
		reflect(left, m, n, nq, r, a, lda, tau[r], c, ldc);
	}
}

// rotation gives the c and s of the Jacobi rotation that zeroes the
// off-diagonal element of [[app, apq], [apq, aqq]].
static void rotation(double app, double aqq, double apq, double *c, double *s) {
	double zeta = (aqq - app) / (2 * apq);
	double t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(1 + zeta * zeta));
	*c = 1 / sqrt(1 + t * t);
	*s = t * *c;
}

// rotate_cols sets columns p and q of x (rows rows) to c·xp - s·xq and
// s·xp + c·xq.
static void rotate_cols(double *x, int ld, int rows, int p, int q, double c, double s) {
	for (int k = 0; k < rows; k++) {
		double xp = AT(x, ld, k, p), xq = AT(x, ld, k, q);
		AT(x, ld, k, p) = c * xp - s * xq;
		AT(x, ld, k, q) = s * xp + c * xq;
	}
}

int sym_eig(int n, double *a, int lda, double *w, int vectors) {
	double *v = calloc((size_t)n * n + 1, sizeof *v);
	if (v == NULL)
		return n > 1 ? n * (n - 1) / 2 : 1;
	for (int i = 0; i < n; i++)
		AT(v, n, i, i) = 1;
	double norm = 0;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			norm = hypot(norm, AT(a, lda, i, j));
	int left = 0;
	for (int sweep = 0; sweep <= MAX_SWEEPS; sweep++) {
		double off = 0;
		left = 0;
		for (int q = 1; q < n; q++)
			for (int p = 0; p < q; p++) {
				off = hypot(off, AT(a, lda, p, q));
				if (fabs(AT(a, lda, p, q)) > 1e-15 * norm)
					left++;
			}
		if (off <= 1e-15 * norm || sweep == MAX_SWEEPS)
			break;
		for (int q = 1; q < n; q++)
			for (int p = 0; p < q; p++) {
				double apq = AT(a, lda, p, q);
				if (apq == 0)
					continue;
				double c, s;
				rotation(AT(a, lda, p, p), AT(a, lda, q, q), apq, &c, &s);
				rotate_cols(a, lda, n, p, q, c, s);
				for (int k = 0; k < n; k++) { // the rows: Jᵀ·(A·J)
					double xp = AT(a, lda, p, k), xq = AT(a, lda, q, k);
					AT(a, lda, p, k) = c * xp - s * xq;
					AT(a, lda, q, k) = s * xp + c * xq;
				}
				rotate_cols(v, n, n, p, q, c, s);
			}
	}
	// Ascending, by selection: n is small in the fake's uses.
	int *order = malloc((size_t)(n + 1) * sizeof *order);
	if (order == NULL) {
		free(v);
		return n > 1 ? n * (n - 1) / 2 : 1;
	}
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (AT(a, lda, order[k], order[k]) < AT(a, lda, order[i], order[i])) {
				int t = order[i];
				order[i] = order[k];
				order[k] = t;
			}
	for (int i = 0; i < n; i++)
		w[i] = AT(a, lda, order[i], order[i]);
	if (vectors)
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++)
				AT(a, lda, i, j) = AT(v, n, i, order[j]);
	free(order);
	free(v);
	return left;
}

// complete makes columns from..to-1 of u (m rows) orthonormal and
// orthogonal to columns 0..from-1, from the unit vectors.
static void complete(int m, double *u, int ldu, int from, int to) {
	int e = 0;
	for (int j = from; j < to && e < m; e++) {
		for (int i = 0; i < m; i++)
			AT(u, ldu, i, j) = i == e;
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < j; k++) {
				double d = 0;
				for (int i = 0; i < m; i++)
					d += AT(u, ldu, i, k) * AT(u, ldu, i, j);
				for (int i = 0; i < m; i++)
					AT(u, ldu, i, j) -= d * AT(u, ldu, i, k);
			}
		double nrm = 0;
		for (int i = 0; i < m; i++)
			nrm = hypot(nrm, AT(u, ldu, i, j));
		if (nrm < 1e-8)
			continue; // e lies in the span already: the next one
		for (int i = 0; i < m; i++)
			AT(u, ldu, i, j) /= nrm;
		j++;
	}
}

int svd(int m, int n, const double *a, int lda, double *s, double *u, int ldu, int ucols, double *vt, int ldvt) {
	// One-sided Jacobi: rotate the columns of W = A until they are
	// orthogonal; then W = U·Σ and A·V = W.
	double *wk = malloc(((size_t)m * n + (size_t)n * n + n + 1) * sizeof *wk);
	if (wk == NULL)
		return n > 1 ? n - 1 : 1;
	double *w = wk, *v = wk + (size_t)m * n;
	int *order = (int *)(v + (size_t)n * n); // n ints fit in n doubles
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++)
			AT(w, m, i, j) = AT(a, lda, i, j);
	memset(v, 0, (size_t)n * n * sizeof *v);
	for (int i = 0; i < n; i++)
		AT(v, n, i, i) = 1;
	int left = 0;
	for (int sweep = 0; sweep <= MAX_SWEEPS; sweep++) {
		left = 0;
		for (int q = 1; q < n; q++)
			for (int p = 0; p < q; p++) {
				double alpha = 0, beta = 0, gamma = 0;
				for (int i = 0; i < m; i++) {
					alpha += AT(w, m, i, p) * AT(w, m, i, p);
					beta += AT(w, m, i, q) * AT(w, m, i, q);
					gamma += AT(w, m, i, p) * AT(w, m, i, q);
				}
				if (fabs(gamma) <= 1e-15 * sqrt(alpha * beta) || gamma == 0)
					continue;
				left++;
				if (sweep == MAX_SWEEPS)
					continue;
				double c, sn;
				rotation(alpha, beta, gamma, &c, &sn);
				rotate_cols(w, m, m, p, q, c, sn);
				rotate_cols(v, n, n, p, q, c, sn);
			}
		if (left == 0)
			break;
	}
	for (int j = 0; j < n; j++) {
		double nrm = 0;
		for (int i = 0; i < m; i++)
			nrm = hypot(nrm, AT(w, m, i, j));
		s[j] = nrm;
		order[j] = j;
	}
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (s[order[k]] > s[order[i]]) {
				int t = order[i];
				order[i] = order[k];
				order[k] = t;
			}
	double *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
	if (sorted == NULL) {
		free(wk);
		return n > 1 ? n - 1 : 1;
	}
	for (int j = 0; j < n; j++)
		sorted[j] = s[order[j]];
	double tiny = (n > 0 ? sorted[0] : 0) * 1e-13;
	int rank = 0;
	if (u != NULL && ucols > 0) {
		for (int j = 0; j < n; j++) {
			if (!(sorted[j] > tiny))
				break;
			for (int i = 0; i < m; i++)
				AT(u, ldu, i, j) = AT(w, m, i, order[j]) / sorted[j];
			rank++;
		}
		complete(m, u, ldu, rank, ucols);
	}
	if (vt != NULL)
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++)
				AT(vt, ldvt, j, i) = AT(v, n, i, order[j]);
	memcpy(s, sorted, (size_t)n * sizeof *s);
	free(sorted);
	free(wk);
	return left > n - 1 ? n - 1 : left;
}
