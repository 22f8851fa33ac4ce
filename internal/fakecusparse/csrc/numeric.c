// Elements: every value is computed as a double complex (a real type's
// imaginary part is 0) and rounded once to its type when stored.
#include "fakecusparse.h"

#include <string.h>

size_t type_size(int t) {
	switch (t) {
	case R_32F:
		return 4;
	case R_64F:
	case C_32F:
		return 8;
	case C_64F:
		return 16;
	}
	return 0;
}

size_t index_size(int t) {
	switch (t) {
	case IDX_32I:
		return 4;
	case IDX_64I:
		return 8;
	}
	return 0;
}

cplx load(const void *p, int t, int64_t i) {
	switch (t) {
	case R_32F:
		return ((const float *)p)[i];
	case R_64F:
		return ((const double *)p)[i];
	case C_32F:
		return ((const float complex *)p)[i];
	default:
		return ((const double complex *)p)[i];
	}
}

void store(void *p, int t, int64_t i, cplx v) {
	switch (t) {
	case R_32F:
		((float *)p)[i] = (float)creal(v);
		break;
	case R_64F:
		((double *)p)[i] = creal(v);
		break;
	case C_32F:
		((float complex *)p)[i] = (float complex)v;
		break;
	default:
		((double complex *)p)[i] = v;
	}
}

int64_t load_index(const void *p, int t, int64_t i) {
	if (t == IDX_32I)
		return ((const int32_t *)p)[i];
	return ((const int64_t *)p)[i];
}

void store_index(void *p, int t, int64_t i, int64_t v) {
	if (t == IDX_32I)
		((int32_t *)p)[i] = (int32_t)v;
	else
		((int64_t *)p)[i] = v;
}

cplx scalar(const void *p, int t) { return load(p, t, 0); }
