#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/kingsmere/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["kingsmere/commercial-waste-price-list"] = (
    "Commercial waste collections: price list 2026/27",
    "Kingsmere District Council - Commercial Waste Service - Price list 2026/27",
    """
# Commercial waste collections: price list 2026/27
For businesses, charities, schools and places of worship in Kingsmere.
Prices apply from 1 April 2026 to 31 March 2027.

1. WHO NEEDS A COMMERCIAL WASTE CONTRACT
By law, every business must make sure its waste is collected by a
registered waste carrier and must keep a waste transfer note. Businesses
can't use household bins or the household waste recycling centres. Our
commercial waste service gives you both the collections and the annual
waste transfer note, which is included in the price.

2. PRICE PER COLLECTION (PER LIFT)
Prices are per bin, each time it is emptied. Council commercial waste
charges are outside the scope of VAT, so no VAT is added.

Bin size       General waste    Mixed recycling    Glass only
240 litres     GBP 9.40         GBP 6.10           GBP 5.80
660 litres     GBP 18.75        GBP 12.20          not available
1,100 litres   GBP 27.60        GBP 17.90          not available

Bin rental is included in the price per lift. Collections can be weekly,
twice weekly or daily (Monday to Saturday) for general waste, and weekly
or fortnightly for recycling and glass.

3. TRADE SACKS
Item                                   Price
Roll of 50 general waste sacks         GBP 112.50
Roll of 50 recycling sacks (clear)     GBP 68.00
Sacks are for businesses with no space for a bin, and are collected on
the same day as the household collections in your street.*
* Sacks must be put out between 6pm the evening before and 6.30am on the
  collection day. Sacks put out at other times may be treated as
  fly-tipping.
<<PAGE>>
4. OTHER CHARGES
Item                                        Charge
Extra collection, booked 2 days ahead       Price per lift plus GBP 15.00
Bin delivery or swap to another size        GBP 25.00 per bin
Contaminated recycling bin emptied as       General waste price for that
general waste                               lift
Replacement bin lock                        GBP 12.00
Duplicate waste transfer note               GBP 10.00

5. CONTRACT AND PAYMENT
Contracts run for a minimum of 12 months and then continue until either
side ends them. To end your contract, give us 3 months' written notice by
email to the commercial waste team. Invoices are sent quarterly in advance
and must be paid within 30 days. If an invoice is not paid, we may suspend
collections after sending you a reminder and a final notice; collections
restart only when the account is paid in full, plus a restart charge of
GBP 30.00. We may charge interest on late payment at 8% above the Bank of
England base rate, as allowed by law.

6. PRICE CHANGES
We review prices every April. We will write to you at least 28 days be-
fore a new price applies.

7. CONTACT
Commercial waste team: 01632 960377, Monday to Thursday 9am to 4.30pm and
Friday 9am to 4pm. Email trade.waste@kingsmere.example. Please quote your
account number, which starts with CW followed by 5 digits.
""",
)

DOCS["healthbridge/uninsured-services-fee-schedule"] = (
    "Fee schedule for uninsured services",
    "Healthbridge Health Inc. - Fee schedule for uninsured services - effective 2026-01-15",
    """
# Fee schedule for uninsured services
Healthbridge Health Inc. Effective January 15, 2026.
All fees are in Canadian dollars (CAD).

1. ABOUT THIS SCHEDULE
Provincial health plans pay for many Healthbridge doctor visits. Some
services are not covered by any plan, or are not covered where you live.
This schedule lists what we charge for them. Our fees follow the
guidance of the medical associations in the provinces we serve.

2. VISITS
Service                                          Fee
Uninsured doctor visit (video or phone)          CAD 69.00*
Uninsured nurse practitioner visit               CAD 55.00*
Prescription renewal without a visit             CAD 35.00
(Quebec residents)
Counselling session, 50 minutes                  CAD 130.00*
Counselling late cancellation or no-show         CAD 40.00
* Plus and Family members pay nothing for uninsured doctor and nurse
  practitioner visits, and pay CAD 95.00 for a counselling session.

A visit is uninsured if your province does not cover Healthbridge
visits, if you are outside your home province at the time of the visit,
or if your health card has expired.
<<PAGE>>
3. NOTES, FORMS AND RECORDS
Service                                          Fee
Sick note for work or school                     CAD 25.00
Short form (1 page), e.g. a gym or camp form     CAD 40.00
Long form, e.g. insurance or disability claim    CAD 95.00
Transfer of records to another clinic            CAD 30.00
Rush completion of a form (1 business day)       CAD 20.00 extra

Forms are usually completed within 5 business days of the visit in which
the clinician assesses you. The fee is charged when the form is completed
and is not refundable after that. We cannot complete driver's medical
exams, immigration medicals or forms that need a physical examination.

4. TAXES
Uninsured medical services such as visits are exempt from GST/HST. Fees
for notes, forms and records transfers are not medical services, so
GST/HST is added at your province's rate.

5. PAYMENT
We charge the card saved in your account. You will get a receipt by
email, which you can submit to a private health insurance plan or claim
as a medical expense on your tax return. For questions about a charge,
contact Member Support at 1-833-555-0142 within 90 days of the charge.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "kingsmere make_pdfs.py")


if __name__ == "__main__":
    main()
